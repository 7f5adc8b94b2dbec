//! The provider endpoint (`--proxy-listen`): the providers' own HTTP APIs in front of
//! ctxd, so an agent nobody here wrote runs through ctxd by changing its base URL.
//!
//! A request is taken apart by the core (`exchange::split`), its history reconciled with
//! the conversation's session (`conversation`: new messages appended, a rewrite
//! forked), the session built by the engine for a provider — the same one decision
//! BuildMessages makes — and put back into the client's body (`exchange::merge`) for the
//! upstream (`upstream`). The reply goes back as it comes, streamed or not, while the
//! response is assembled and appended with its usage.
//!
//! - `route`: which provider format a path is, and where it goes upstream;
//! - `answer`: the response body type and ctxd's errors in the provider's shape;
//! - `conversation`: which session a request continues, reconciled;
//! - `upstream`: the forwarded call, its reply passed through (or held, while recall
//!   rounds may follow) and recorded;
//! - `rounds`: a reply that called ctxd's recall tools, answered and sent back upstream
//!   without the agent seeing it;
//! - `listener`: connections, TLS, the request body's bound.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::auth::Auth;
use crate::engine::Engine;
use crate::store::ProxyHead;

mod answer;
mod conversation;
mod handler;
mod listener;
mod rounds;
mod route;
mod upstream;

pub use listener::serve;

/// Where each provider format's requests go.
#[derive(Debug, Clone)]
pub struct Upstreams {
    pub openai: String,
    pub anthropic: String,
    pub gemini: String,
}

/// The endpoint's own settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Largest request body taken.
    pub max_body_bytes: usize,
    /// The sessions the endpoint creates get the recall tools.
    pub recall_tools: bool,
    /// Recall rounds per agent request at most.
    pub recall_rounds: u32,
}

impl Settings {
    /// Bodies up to `max_body_bytes`, without recall.
    pub fn new(max_body_bytes: usize) -> Settings {
        Settings {
            max_body_bytes,
            recall_tools: false,
            recall_rounds: 3,
        }
    }
}

/// What the endpoint needs: the engine, the tenants' keys, the upstreams, and one lock
/// per conversation so a client's concurrent requests are reconciled one at a time.
pub struct Proxy {
    engine: Engine,
    auth: Arc<Auth>,
    upstreams: Upstreams,
    client: reqwest::Client,
    locks: Mutex<HashMap<(i64, String), Arc<Lanes>>>,
    /// The heads this replica last wrote, so a conversation's next request here reads
    /// none (an append that trusts one expects its version: a stale one is caught).
    heads: Mutex<HashMap<(i64, String), ProxyHead>>,
    settings: Settings,
}

/// A conversation's two locks: its turn (one request reconciled, built and recorded at
/// a time) and its head's write, taken before the turn is released so heads are written
/// in turn order while the next request already runs.
#[derive(Default)]
struct Lanes {
    turn: Arc<tokio::sync::Mutex<()>>,
    head: Arc<tokio::sync::Mutex<()>>,
}

/// Conversations whose locks are kept between requests before idle ones are dropped.
const MAX_IDLE_LOCKS: usize = 10_000;

impl Proxy {
    pub fn new(engine: Engine, auth: Arc<Auth>, upstreams: Upstreams, settings: Settings) -> Proxy {
        Proxy {
            engine,
            auth,
            upstreams,
            client: reqwest::Client::new(),
            locks: Mutex::new(HashMap::new()),
            heads: Mutex::new(HashMap::new()),
            settings,
        }
    }

    /// The head this replica last wrote for a conversation, if it remembers one.
    fn cached_head(&self, tenant: i64, key: &str) -> Option<ProxyHead> {
        let heads = self
            .heads
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        heads.get(&(tenant, key.to_string())).cloned()
    }

    fn remember_head(&self, tenant: i64, key: &str, head: ProxyHead) {
        let mut heads = self
            .heads
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if heads.len() >= MAX_IDLE_LOCKS {
            heads.clear();
        }
        heads.insert((tenant, key.to_string()), head);
    }

    /// The locks of one conversation of one tenant.
    fn lanes_of(&self, tenant: i64, key: &str) -> Arc<Lanes> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if locks.len() >= MAX_IDLE_LOCKS {
            locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        }
        locks.entry((tenant, key.to_string())).or_default().clone()
    }
}
