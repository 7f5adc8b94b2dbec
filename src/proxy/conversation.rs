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

use sha2::{Digest, Sha256};
use tokio::sync::OwnedMutexGuard;

use super::Proxy;
use crate::engine::{AppendRequest, ExpandRequest, ExpandTarget, ForkRequest, Usage};
use crate::error::{Error, Result};
use crate::exchange::{self, ClientRequest, Fingerprint, Reconciled};
use crate::ingest::{self, Provider};
use crate::message::Message;
use crate::policy::PolicyOverrides;
use crate::store::ProxyHead;

/// The header naming a conversation's session.
pub(super) const SESSION_HEADER: &str = "x-ctxd-session";
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
    _turn: OwnedMutexGuard<()>,
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
        let key = match named {
            Some(name) => {
                crate::validate::validate_session_id(name).map_err(|_| {
                    Error::invalid(
                        SESSION_HEADER,
                        "must be 1 to 128 characters from A-Z a-z 0-9 . _ : -",
                    )
                })?;
                name.to_string()
            }
            None => derived_key(tenant, request, &incoming),
        };
        let turn = proxy.lock_of(tenant, &key).lock_owned().await;
        let store = proxy.engine.store();
        let head = store.proxy_head(tenant, &key).await?;
        let (session_id, new_from) = match head {
            Some(head) if extends(&head, &fingerprints) => {
                (head.session_id, head.message_count as usize)
            }
            Some(head) => {
                reconcile(
                    proxy,
                    tenant,
                    &key,
                    &head.session_id,
                    request.provider,
                    &fingerprints,
                )
                .await?
            }
            None => {
                create(proxy, tenant, &key, request.provider).await?;
                reconcile(proxy, tenant, &key, &key, request.provider, &fingerprints).await?
            }
        };
        let mut conversation = Conversation {
            tenant,
            key,
            session_id,
            fingerprints: fingerprints[..new_from].to_vec(),
            _turn: turn,
        };
        conversation
            .append(proxy, incoming[new_from..].to_vec(), None)
            .await?;
        Ok(conversation)
    }

    /// Appends a model's reply, read from its whole response body.
    pub async fn record_reply(
        &mut self,
        proxy: &Proxy,
        provider: Provider,
        body: &str,
    ) -> Result<()> {
        let read = ingest::response(provider, body)
            .map_err(|error| Error::invalid(format!("response {}", error.path), error.reason))?;
        self.append(proxy, read.messages, read.usage).await
    }

    /// Appends `messages` (in batches the server takes), then moves the head past them.
    async fn append(
        &mut self,
        proxy: &Proxy,
        messages: Vec<Message>,
        usage: Option<Usage>,
    ) -> Result<()> {
        let batch = proxy.engine.config().limits.max_append_messages.max(1);
        let chunks: Vec<Vec<Message>> = messages.chunks(batch).map(<[Message]>::to_vec).collect();
        let last = chunks.len().saturating_sub(1);
        for (index, chunk) in chunks.into_iter().enumerate() {
            let fingerprints: Vec<Fingerprint> = chunk.iter().map(exchange::fingerprint).collect();
            let request = AppendRequest {
                session_id: self.session_id.clone(),
                messages: chunk,
                expected_version: None,
                idempotency: None,
                usage: if index == last { usage.clone() } else { None },
            };
            proxy.engine.append_turn(self.tenant, request).await?;
            self.fingerprints.extend(fingerprints);
        }
        let head = ProxyHead {
            session_id: self.session_id.clone(),
            message_count: self.fingerprints.len() as i64,
            digest: exchange::chain(&self.fingerprints).to_vec(),
        };
        proxy
            .engine
            .store()
            .set_proxy_head(self.tenant, &self.key, &head)
            .await?;
        Ok(())
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

/// A conversation's name for a client that gives none: one per task.
fn derived_key(tenant: i64, request: &ClientRequest, incoming: &[Message]) -> String {
    let mut hash = Sha256::new();
    hash.update(tenant.to_le_bytes());
    hash.update(exchange::history_field(request.provider));
    hash.update((request.system_text.len() as u64).to_le_bytes());
    hash.update(request.system_text.as_bytes());
    if let Some(first) = incoming.first() {
        hash.update(exchange::fingerprint(first));
    }
    format!("proxy-{}", &hex::encode(hash.finalize())[..32])
}

async fn create(proxy: &Proxy, tenant: i64, session_id: &str, provider: Provider) -> Result<()> {
    let metadata = BTreeMap::from([(FORMAT_METADATA.to_string(), format!("{provider:?}"))]);
    let created = proxy
        .engine
        .create_session(
            tenant,
            session_id,
            PolicyOverrides::default(),
            metadata,
            "",
            "",
        )
        .await;
    match created {
        Ok(_) | Err(Error::AlreadyExists(_)) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The slow path: `fingerprints` compared with `session_id`'s stored originals. Returns
/// the session the conversation continues in and how much of the history it holds.
async fn reconcile(
    proxy: &Proxy,
    tenant: i64,
    key: &str,
    session_id: &str,
    provider: Provider,
    fingerprints: &[Fingerprint],
) -> Result<(String, usize)> {
    let stored = originals(proxy, tenant, session_id).await?;
    let stored_fingerprints: Vec<Fingerprint> = stored
        .iter()
        .map(|(_, message)| exchange::fingerprint(message))
        .collect();
    match exchange::reconcile(&stored_fingerprints, fingerprints) {
        Reconciled::Extends { new_from } => Ok((session_id.to_string(), new_from)),
        Reconciled::Diverges { at } => {
            let fork_id = format!(
                "{}.{}",
                key.chars().take(80).collect::<String>(),
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            );
            if at == 0 {
                create(proxy, tenant, &fork_id, provider).await?;
            } else {
                let request = ForkRequest {
                    source_session_id: session_id.to_string(),
                    at_seq: Some(stored[at - 1].0),
                    session_id: fork_id.clone(),
                    overrides: PolicyOverrides::default(),
                    metadata: BTreeMap::new(),
                };
                proxy.engine.fork_session(tenant, request).await?;
            }
            tracing::info!(session_id, fork = %fork_id, at, "provider endpoint: the client rewrote its history; forked");
            Ok((fork_id, at))
        }
    }
}

/// Every original message of a session, with its seq.
async fn originals(proxy: &Proxy, tenant: i64, session_id: &str) -> Result<Vec<(i64, Message)>> {
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
    Ok(out)
}
