//! `ctxd tune`: which policy is best for *your* sessions. A tenant's own stored sessions
//! (the most recently active, or those whose metadata matches) are read back whole and
//! replayed, under each candidate policy, into new sessions of the same server — the
//! same engine, the same summarizer — each measured as `ctxd eval` measures a strategy:
//! billed input with prompt caching, cache-stable requests, retention of what is no
//! longer verbatim (over all requests and at the last), over-budget requests. The
//! replays are deleted after; the stored sessions and their events are only read.
//!
//! - `candidates`: the policies tried, each one change from the sessions' own;
//! - `report`: the table, the picture, and the recommendation.
mod candidates;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use ctxd_core::tokenize::ToolDefinition;

use crate::client::{ClientTls, with_key};
use crate::eval::facts::SessionFacts;
use crate::eval::meter::{Meter, Totals};
use crate::eval::server::{self, Client};
use crate::eval::strategies::Setup;
use crate::replay::BoxError;
use ctxd_server::pb;

pub use candidates::{Candidate, candidates};
pub use report::{Outcome, recommend};

/// How a tune runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: String,
    pub tls: ClientTls,
    pub api_key: Option<String>,
    /// How many of the tenant's sessions, most recently active first.
    pub sessions: usize,
    /// Only sessions whose metadata has each of these keys with this value.
    pub metadata: Vec<(String, String)>,
    /// Weight of retention against cost in the recommendation (0 to 1).
    pub weight: f64,
    /// Write `tune.md` and `tune.svg` here.
    pub out: Option<PathBuf>,
}

/// Ids of the sessions a tune makes for its replays (never taken as the tenant's own).
pub const REPLAY_PREFIX: &str = "ctxd-tune-";
/// Longest session a tune replays, in messages.
const MAX_MESSAGES: i64 = 5_000;

/// One stored session, read back.
struct Stored {
    policy: pb::Policy,
    window: i64,
    messages: Vec<pb::Message>,
    facts: SessionFacts,
}

/// Runs the tune and returns what it found.
pub async fn run(options: &Options) -> Result<Outcome, BoxError> {
    if !(0.0..=1.0).contains(&options.weight) {
        return Err("--weight must be between 0 and 1".into());
    }
    let channel = crate::client::connect(
        &options.addr,
        &options.tls,
        Duration::from_secs(5),
        Duration::from_secs(300),
    )
    .await?;
    let mut client = Client::new(channel).max_decoding_message_size(usize::MAX);
    let key = options.api_key.as_deref();
    let stored = read_sessions(&mut client, key, options).await?;
    if stored.is_empty() {
        return Err("no stored session to replay (ListSessions found none)".into());
    }
    let candidates = candidates();
    let mut totals = Vec::with_capacity(candidates.len());
    for candidate in &candidates {
        let mut sum = Totals::default();
        for session in &stored {
            sum.add(&replay(&mut client, key, session, candidate).await?);
        }
        totals.push(sum);
    }
    Ok(recommend(stored.len(), candidates, totals, options.weight))
}

/// The tenant's sessions to replay, read back whole.
async fn read_sessions(
    client: &mut Client,
    key: Option<&str>,
    options: &Options,
) -> Result<Vec<Stored>, BoxError> {
    let list = pb::ListSessionsRequest {
        page_size: i32::try_from(options.sessions.clamp(1, 1000)).unwrap_or(1000),
        metadata: options.metadata.iter().cloned().collect(),
        ..Default::default()
    };
    let listed = client
        .list_sessions(with_key(list, key)?)
        .await?
        .into_inner();
    let mut out = Vec::new();
    for session in listed.sessions {
        let id = session.session_id.clone();
        if id.starts_with(REPLAY_PREFIX) || id.starts_with("eval-") || session.message_count < 2 {
            continue;
        }
        if session.message_count > MAX_MESSAGES {
            return Err(
                format!("session {id}: over {MAX_MESSAGES} messages; filter it out").into(),
            );
        }
        let policy = session
            .requested_policy
            .or(session.policy)
            .unwrap_or_default();
        let window = policy.context_window_tokens.unwrap_or(0);
        let messages = originals(client, key, &id, session.message_count).await?;
        let core: Vec<_> = messages.iter().map(server::to_core).collect();
        out.push(Stored {
            policy,
            window,
            facts: SessionFacts::new(&core),
            messages,
        });
    }
    Ok(out)
}

/// Every original message of a session, in order, as it can be appended again.
async fn originals(
    client: &mut Client,
    key: Option<&str>,
    session_id: &str,
    last_seq: i64,
) -> Result<Vec<pb::Message>, BoxError> {
    let mut out = Vec::new();
    let mut next = 1;
    while next >= 1 && next <= last_seq {
        let expand = pb::ExpandRequest {
            session_id: session_id.to_string(),
            target: Some(pb::expand_request::Target::Range(pb::SeqRange {
                first_seq: next,
                last_seq,
            })),
            max_tokens: 0,
        };
        let read = client.expand(with_key(expand, key)?).await?.into_inner();
        out.extend(read.messages.into_iter().map(appendable));
        next = if read.next_seq == 0 {
            last_seq + 1
        } else {
            read.next_seq
        };
    }
    Ok(out)
}

/// A stored message as a new append: without what the server filled in.
fn appendable(message: pb::Message) -> pb::Message {
    pb::Message {
        seq: 0,
        turn: 0,
        token_count: 0,
        view_state: 0,
        view_token_count: 0,
        created_at: None,
        ..message
    }
}

/// One stored session replayed under `candidate` into a new session, measured.
async fn replay(
    client: &mut Client,
    key: Option<&str>,
    session: &Stored,
    candidate: &Candidate,
) -> Result<Totals, BoxError> {
    let session_id = format!("{REPLAY_PREFIX}{}", uuid::Uuid::new_v4().simple());
    let create = pb::CreateSessionRequest {
        session_id: session_id.clone(),
        policy: Some(candidate.apply(&session.policy)),
        ..Default::default()
    };
    client.create_session(with_key(create, key)?).await?;
    let tools = pb::Tools::default();
    let replayed =
        server::replay_into(client, key, &session_id, "", &session.messages, &tools).await;
    server::delete(client, key, session_id).await?;
    let replayed = replayed?;
    let no_tools: [ToolDefinition; 0] = [];
    let mut setup = Setup::new(session.window, "", &no_tools)?;
    // The session's own output reserve: over budget is past what its requests may hold.
    if let Some(reserve) = session.policy.max_output_tokens {
        setup.room = session.window - reserve;
    }
    let mut meter = Meter::new(&setup, &session.facts, &no_tools, "");
    for (step, build) in &replayed.builds {
        meter.add(*step, build);
    }
    let mut totals = meter.finish();
    totals.units += replayed.unseen_input as f64;
    totals.summarizer_input += replayed.unseen_input;
    Ok(totals)
}
