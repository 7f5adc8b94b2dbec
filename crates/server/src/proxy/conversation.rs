//! Which session a request continues, and what of its history is new.
//!
//! A conversation is named by the `x-ctxd-session` header or, for a client that sends
//! none, by a digest of (tenant, format, system prompt, first message): an unmodified
//! agent gets one session per task. The head (`store::ProxyHead`) says which session
//! the conversation continues in and holds the chained fingerprints of the history it
//! holds, so a request that extends it is recognised without reading it back. Anything
//! else — a rewrite, a retry of an earlier request — is compared with the stored
//! originals: the shared start stays, the rest is a fork (ForkSession) at the first
//! difference, and the conversation continues there. Nothing the client sent is lost or
//! stored twice.
use std::collections::BTreeMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::OwnedMutexGuard;

use super::{Lanes, Proxy};
use crate::engine::{AppendRequest, ExpandRequest, ExpandTarget, ForkRequest, SessionInfo, Usage};
use crate::error::{Error, Result};
use crate::exchange::{self, ClientRequest, Fingerprint, Reconciled};
use crate::format::Format;
use crate::ingest::{self, Ingested};
use crate::message::{Message, Role};
use crate::policy::PolicyOverrides;
use crate::recall;
use crate::store::ProxyHead;

/// The header naming a conversation's session.
pub(super) const SESSION_HEADER: &str = "x-ctxd-session";
/// Times a request's history is compared with its session while other writers keep
/// moving it, before the request is refused.
const MAX_RECONCILES: usize = 8;
/// Metadata key of the sessions the endpoint creates: the provider format.
const FORMAT_METADATA: &str = "ctxd.proxy.format";

/// A conversation whose history is reconciled; held (its lock taken) until the reply is
/// recorded.
pub(super) struct Conversation {
    tenant: i64,
    key: String,
    pub session_id: String,
    /// Fingerprints of the client's history the session holds.
    fingerprints: Vec<Fingerprint>,
    /// The version the session must be at for the next append (a trusted head's), or
    /// none once the history was checked against the session itself.
    expected_version: Option<i64>,
    /// The session's version after the last append.
    version: i64,
    turn: Option<OwnedMutexGuard<()>>,
    lanes: Arc<Lanes>,
}

impl Conversation {
    /// Reconciles `request`'s history with its conversation's session: appends what is
    /// new, forks on a rewrite.
    pub async fn open(
        proxy: &Proxy,
        tenant: i64,
        named: Option<&str>,
        request: &ClientRequest,
    ) -> Result<Conversation> {
        let incoming = read_history(request)?;
        let fingerprints: Vec<Fingerprint> = incoming.iter().map(exchange::fingerprint).collect();
        let key = conversation_key(tenant, named, request, &incoming)?;
        let lanes = proxy.lanes_of(tenant, &key);
        let turn = lanes.turn.clone().lock_owned().await;
        let head = match proxy.cached_head(tenant, &key) {
            Some(head) => Some(head),
            None => proxy.engine.store().proxy_head(tenant, &key).await?,
        };
        let mut conversation = Conversation {
            tenant,
            key,
            session_id: String::new(),
            fingerprints: Vec::new(),
            expected_version: None,
            version: 0,
            turn: Some(turn),
            lanes,
        };
        // The fast path: the head's history starts the request's, and the session is
        // where the head left it.
        if let Some(head) = &head
            && extends(head, &fingerprints)
        {
            let count = head.message_count as usize;
            conversation.session_id = head.session_id.clone();
            conversation.fingerprints = fingerprints[..count].to_vec();
            conversation.expected_version = Some(head.session_version);
            conversation.version = head.session_version;
            match conversation
                .append(proxy, incoming[count..].to_vec(), None, true)
                .await
            {
                // Another writer moved the session, or it was deleted: the slow path.
                Err(Error::Conflict { .. } | Error::NotFound { .. }) => {}
                done => {
                    conversation.expected_version = None;
                    return done.map(|()| conversation);
                }
            }
        }
        let source = match head {
            Some(head) if exists(proxy, tenant, &head.session_id).await? => head.session_id,
            // The conversation's session was deleted: it starts again in a new one.
            Some(_) => {
                let id = branch_id(&conversation.key);
                create(proxy, tenant, &id, request.provider).await?;
                id
            }
            None => {
                create(proxy, tenant, &conversation.key, request.provider).await?;
                conversation.key.clone()
            }
        };
        // The slow path: compared with the session itself, appended at the version it
        // was compared at; another writer in between means comparing again.
        let key = conversation.key.clone();
        let mut outcome = Ok(());
        for _ in 0..MAX_RECONCILES {
            let branch = reconcile(
                proxy,
                tenant,
                &key,
                &source,
                request.provider,
                &fingerprints,
            )
            .await?;
            conversation.session_id = branch.session_id;
            conversation.fingerprints = fingerprints[..branch.shared].to_vec();
            conversation.expected_version = Some(branch.version);
            conversation.version = branch.version;
            outcome = conversation
                .append(proxy, incoming[branch.shared..].to_vec(), None, true)
                .await;
            if !matches!(outcome, Err(Error::Conflict { .. })) {
                break;
            }
        }
        conversation.expected_version = None;
        outcome.map(|()| conversation)
    }

    /// The version the next append expects (the session as a build left it).
    pub fn expect_version(&mut self, version: i64) {
        self.expected_version = Some(version);
    }

    /// Appends a model's reply, read from its whole response body, onto the session as
    /// the build left it: when another writer moved it meanwhile (the client's next
    /// request, through another replica, carried the reply already), nothing is
    /// appended.
    pub async fn record_reply(
        &mut self,
        proxy: &Proxy,
        provider: Format,
        body: &str,
    ) -> Result<()> {
        let read = ingest::response(provider, body)
            .map_err(|error| Error::invalid(format!("response {}", error.path), error.reason))?;
        match self.append(proxy, read.messages, read.usage, true).await {
            Err(Error::Conflict { .. }) => {
                tracing::info!(session_id = %self.session_id, "provider endpoint: the session moved before the reply was recorded; the client's history carries it");
                Ok(())
            }
            done => done,
        }
    }

    /// Records a reply that is recall round `number` — the reply, marked, then an answer
    /// to each of its calls — and the session's version after. `Conflict` when another
    /// writer moved the session since the build (nothing recorded).
    pub async fn record_round(
        &mut self,
        proxy: &Proxy,
        mut reply: Ingested,
        round: &recall::Round,
        number: u32,
    ) -> Result<()> {
        recall::mark(&mut reply.messages, number);
        self.append(proxy, reply.messages, reply.usage, false)
            .await?;
        for id in &round.recall {
            let outcome = proxy
                .engine
                .answer_recall(self.tenant, &self.session_id, id, number)
                .await?;
            self.version = outcome.version;
        }
        let skipped: Vec<Message> = (round.others.iter())
            .map(|(id, name)| recall::not_run(id, name))
            .collect();
        if !skipped.is_empty() {
            self.append(proxy, skipped, None, false).await?;
        }
        proxy.remember_head(self.tenant, &self.key, self.head());
        Ok(())
    }

    /// Writes the head where other replicas (and this one after a restart) find it. The
    /// conversation's next request runs meanwhile (this replica remembers the head); the
    /// heads' own lock, taken before the turn is let go, keeps their writes in order.
    pub async fn finish(mut self, proxy: &Proxy) {
        if self.session_id.is_empty() {
            return;
        }
        let head = self.head();
        let _writing = self.lanes.head.clone().lock_owned().await;
        drop(self.turn.take());
        if let Err(error) = proxy
            .engine
            .store()
            .set_proxy_head(self.tenant, &self.key, &head)
            .await
        {
            tracing::warn!(session_id = %self.session_id, error = %error, "provider endpoint: the conversation's head was not written; its next request compares with the session");
        }
    }

    fn head(&self) -> ProxyHead {
        ProxyHead {
            session_id: self.session_id.clone(),
            message_count: self.fingerprints.len() as i64,
            digest: exchange::chain(&self.fingerprints).to_vec(),
            session_version: self.version,
        }
    }

    /// Appends `messages` (in batches the server takes), the first batch at the expected
    /// version when there is one; this replica remembers the head after. Messages not
    /// `visible` (a recall round's) are not in the client's history: the head's
    /// fingerprints leave them out.
    async fn append(
        &mut self,
        proxy: &Proxy,
        messages: Vec<Message>,
        usage: Option<Usage>,
        visible: bool,
    ) -> Result<()> {
        let batch = proxy.engine.config().limits.max_append_messages.max(1);
        let chunks: Vec<Vec<Message>> = messages.chunks(batch).map(<[Message]>::to_vec).collect();
        let last = chunks.len().saturating_sub(1);
        for (index, chunk) in chunks.into_iter().enumerate() {
            let fingerprints: Vec<Fingerprint> = chunk.iter().map(exchange::fingerprint).collect();
            let request = AppendRequest {
                session_id: self.session_id.clone(),
                messages: chunk,
                expected_version: self.expected_version.take(),
                idempotency: None,
                usage: if index == last { usage } else { None },
                recall: None,
            };
            self.version = proxy
                .engine
                .append_turn(self.tenant, request)
                .await?
                .version;
            if visible {
                self.fingerprints.extend(fingerprints);
            }
        }
        proxy.remember_head(self.tenant, &self.key, self.head());
        Ok(())
    }
}

/// The conversation a request continues: the header's name, or one derived.
fn conversation_key(
    tenant: i64,
    named: Option<&str>,
    request: &ClientRequest,
    incoming: &[Message],
) -> Result<String> {
    match named {
        Some(name) => {
            crate::validate::validate_session_id(name).map_err(|_| {
                Error::invalid(
                    SESSION_HEADER,
                    "must be 1 to 128 characters from A-Z a-z 0-9 . _ : -",
                )
            })?;
            Ok(name.to_string())
        }
        None => Ok(derived_key(tenant, request, incoming)),
    }
}

/// The request's history as messages; an error names the body's path.
fn read_history(request: &ClientRequest) -> Result<Vec<Message>> {
    let field = exchange::history_field(request.provider);
    ingest::items(request.provider, &request.history)
        .map(|read| read.messages)
        .map_err(|error| {
            let path = format!("$.{field}{}", error.path.trim_start_matches('$'));
            Error::invalid(path, error.reason)
        })
}

/// Whether the head's history is the start of `fingerprints`.
fn extends(head: &ProxyHead, fingerprints: &[Fingerprint]) -> bool {
    let count = head.message_count as usize;
    count <= fingerprints.len() && exchange::chain(&fingerprints[..count]).as_slice() == head.digest
}

/// A conversation's name for a client that gives none: one per task, named by the
/// tenant, the format, the system prompt and the messages up to the first user message.
fn derived_key(tenant: i64, request: &ClientRequest, incoming: &[Message]) -> String {
    let mut hash = Sha256::new();
    hash.update(tenant.to_le_bytes());
    hash.update(exchange::history_field(request.provider));
    hash.update((request.system_text.len() as u64).to_le_bytes());
    hash.update(request.system_text.as_bytes());
    // The messages up to the first user message: a system prompt sent among the messages
    // (Codex sends its instructions as developer messages) and the task.
    let task = incoming
        .iter()
        .position(|m| m.role == Role::User)
        .map_or(incoming.len(), |at| at + 1);
    for message in &incoming[..task.min(incoming.len())] {
        hash.update(exchange::fingerprint(message));
    }
    format!("proxy-{}", &hex::encode(hash.finalize())[..32])
}

/// Creates the session unless it exists; the new session, when this made it.
async fn create(
    proxy: &Proxy,
    tenant: i64,
    session_id: &str,
    provider: Format,
) -> Result<Option<SessionInfo>> {
    let metadata = BTreeMap::from([(FORMAT_METADATA.to_string(), format!("{provider:?}"))]);
    let created = proxy
        .engine
        .create_session(
            tenant,
            session_id,
            PolicyOverrides {
                recall_tools: proxy.settings.recall_tools.then_some(true),
                ..PolicyOverrides::default()
            },
            metadata,
            "",
            "",
        )
        .await;
    match created {
        Ok((info, _)) => Ok(Some(info)),
        Err(Error::AlreadyExists(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Where the slow path found a request's history: the session it continues in, how
/// many of its messages that session holds, and the session's version when compared.
struct Branch {
    session_id: String,
    shared: usize,
    version: i64,
}

/// The slow path: `fingerprints` compared with `session_id`'s stored originals.
async fn reconcile(
    proxy: &Proxy,
    tenant: i64,
    key: &str,
    session_id: &str,
    provider: Format,
    fingerprints: &[Fingerprint],
) -> Result<Branch> {
    let (mut stored, version) = originals(proxy, tenant, session_id).await?;
    // Recall rounds the endpoint ran are not in the client's history.
    stored.retain(|(_, message)| !recall::is_round(message));
    let stored_fingerprints: Vec<Fingerprint> = stored
        .iter()
        .map(|(_, message)| exchange::fingerprint(message))
        .collect();
    let at = match exchange::reconcile(&stored_fingerprints, fingerprints) {
        Reconciled::Extends { new_from } => {
            let session_id = session_id.to_string();
            return Ok(Branch {
                session_id,
                shared: new_from,
                version,
            });
        }
        Reconciled::Diverges { at } => at,
    };
    let fork_id = branch_id(key);
    let info = if at == 0 {
        create(proxy, tenant, &fork_id, provider).await?
    } else {
        let request = ForkRequest {
            source_session_id: session_id.to_string(),
            at_seq: Some(stored[at - 1].0),
            session_id: fork_id.clone(),
            overrides: PolicyOverrides::default(),
            metadata: BTreeMap::new(),
        };
        Some(proxy.engine.fork_session(tenant, request).await?)
    };
    tracing::info!(session_id, fork = %fork_id, at, "provider endpoint: the client's history differs from the session's; forked");
    let version = info.map_or(0, |info| info.row.version);
    Ok(Branch {
        session_id: fork_id,
        shared: at,
        version,
    })
}

/// A new session's id in a conversation: its key and a random suffix.
fn branch_id(key: &str) -> String {
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{}.{}",
        key.chars().take(80).collect::<String>(),
        &suffix[..12]
    )
}

/// Whether the session exists (it may have been deleted since a head named it).
async fn exists(proxy: &Proxy, tenant: i64, session_id: &str) -> Result<bool> {
    match proxy.engine.get_session(tenant, session_id).await {
        Ok(_) => Ok(true),
        Err(Error::NotFound { .. }) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Every original message of a session, with its seq, and the session's version then.
async fn originals(
    proxy: &Proxy,
    tenant: i64,
    session_id: &str,
) -> Result<(Vec<(i64, Message)>, i64)> {
    let info = proxy.engine.get_session(tenant, session_id).await?;
    let last_seq = info.row.message_count;
    let mut out = Vec::new();
    let mut next = 1;
    while next >= 1 && next <= last_seq {
        let request = ExpandRequest {
            session_id: session_id.to_string(),
            target: ExpandTarget::Range {
                first_seq: next,
                last_seq,
            },
            max_tokens: 0,
        };
        let expanded = proxy.engine.expand(tenant, request).await?;
        out.extend(
            expanded
                .messages
                .into_iter()
                .map(|stored| (stored.seq, stored.message)),
        );
        next = if expanded.next_seq == 0 {
            last_seq + 1
        } else {
            expanded.next_seq
        };
    }
    Ok((out, info.row.version))
}
