//! ctxd's own column: a recorded session replayed through a running server as an agent
//! would (BuildMessages before each assistant message, AppendTurn after each message),
//! each built request taken as ctxd sends it (NEUTRAL: the system prompt with its
//! summaries, then the messages).
use std::collections::HashSet;

use ctxd_core::message::{Message, Role, ToolCall};

use super::strategies::Build;
use crate::client::with_key;
use crate::replay::BoxError;
use ctxd_server::pb;
use ctxd_server::pb::context_service_client::ContextServiceClient;

pub type Client = ContextServiceClient<tonic::transport::Channel>;

pub fn to_core(message: &pb::Message) -> Message {
    let role = match pb::Role::try_from(message.role) {
        Ok(pb::Role::System) => Role::System,
        Ok(pb::Role::Assistant) => Role::Assistant,
        Ok(pb::Role::Tool) => Role::Tool,
        _ => Role::User,
    };
    Message {
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments_json.clone(),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        ..Message::text(role, message.content.clone())
    }
}

/// What ctxd did with one session: each request with the recorded messages before it
/// (the summarizer input of the summaries it shows first), the summaries it wrote, and
/// those no request showed (written and condensed between two requests): how many, and
/// their summarizer input as the server reports it (Search's `source_tokens`).
pub struct Replayed {
    pub builds: Vec<(usize, Build)>,
    pub summaries_written: i64,
    pub unseen: i64,
    pub unseen_input: i64,
    /// Search recall of what the last request lost: (found, asked).
    pub recall: super::meter::Measured,
}

/// Creates a session for a replay in `window`; returns its id.
pub async fn create(
    client: &mut Client,
    api_key: Option<&str>,
    window: i64,
) -> Result<String, BoxError> {
    let session_id = format!("eval-{}", uuid::Uuid::new_v4().simple());
    let create = pb::CreateSessionRequest {
        session_id: session_id.clone(),
        policy: Some(pb::Policy {
            context_window_tokens: Some(window),
            tokenizer: Some(pb::Tokenizer::O200kBase as i32),
            ..Default::default()
        }),
        ..Default::default()
    };
    client.create_session(with_key(create, api_key)?).await?;
    Ok(session_id)
}

pub async fn delete(
    client: &mut Client,
    api_key: Option<&str>,
    session_id: String,
) -> Result<(), BoxError> {
    let delete = pb::DeleteSessionRequest { session_id };
    client.delete_session(with_key(delete, api_key)?).await?;
    Ok(())
}

/// Replays `messages` (pb form, recorded order) into the new session `session_id`.
pub async fn replay_into(
    client: &mut Client,
    api_key: Option<&str>,
    session_id: &str,
    system: &str,
    messages: &[pb::Message],
    tools: &pb::Tools,
) -> Result<Replayed, BoxError> {
    let mut builds = Vec::new();
    let mut seen = HashSet::new();
    let mut replayed = Replayed {
        builds: Vec::new(),
        summaries_written: 0,
        unseen: 0,
        unseen_input: 0,
        recall: super::meter::Measured::default(),
    };
    let started = std::time::SystemTime::now();
    for (index, message) in messages.iter().enumerate() {
        if message.role == pb::Role::Assistant as i32 {
            let request = pb::BuildMessagesRequest {
                session_id: session_id.to_string(),
                system_prompt: system.to_string(),
                tools: Some(tools.clone()),
                format: pb::OutputFormat::Neutral as i32,
                ..Default::default()
            };
            let built = client
                .build_messages(with_key(request, api_key)?)
                .await?
                .into_inner();
            let mut read = 0;
            for summary in &built.summaries {
                if seen.insert(summary.summary_id) {
                    read += summary.source_tokens;
                }
            }
            builds.push((
                index,
                Build {
                    system: built.system_prompt.clone(),
                    messages: built.messages.iter().map(to_core).collect(),
                    summarizer_input: read,
                },
            ));
        }
        let append = pb::AppendTurnRequest {
            session_id: session_id.to_string(),
            messages: vec![message.clone()],
            ..Default::default()
        };
        client.append_turn(with_key(append, api_key)?).await?;
    }
    let get = pb::GetSessionRequest {
        session_id: session_id.to_string(),
        include_view: false,
    };
    let session = client
        .get_session(with_key(get, api_key)?)
        .await?
        .into_inner()
        .session;
    replayed.builds = builds;
    replayed.summaries_written = session
        .and_then(|s| s.compaction)
        .map_or(0, |c| c.summaries_written);
    let finished = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
    let hits = summaries(client, api_key, session_id, started, finished).await?;
    if hits.len() as i64 != replayed.summaries_written {
        return Err(format!(
            "session {session_id}: search found {} summaries of the {} written",
            hits.len(),
            replayed.summaries_written
        )
        .into());
    }
    for hit in hits.iter().filter(|hit| !seen.contains(&hit.summary_id)) {
        replayed.unseen += 1;
        replayed.unseen_input += hit.source_tokens;
    }
    Ok(replayed)
}

/// Every summary of the session written in [since, until): each one's text opens with
/// "Summary", and Search returns at most 100 hits, so a full page is split in two
/// halves of time.
async fn summaries(
    client: &mut Client,
    api_key: Option<&str>,
    session_id: &str,
    since: std::time::SystemTime,
    until: std::time::SystemTime,
) -> Result<Vec<pb::SearchHit>, BoxError> {
    let mut pending = vec![(since, until)];
    let mut found = Vec::new();
    while let Some((since, until)) = pending.pop() {
        let search = pb::SearchRequest {
            session_id: session_id.to_string(),
            query: "summary".into(),
            scope: pb::SearchScope::Summaries as i32,
            limit: 100,
            since: Some(since.into()),
            until: Some(until.into()),
            ..Default::default()
        };
        let hits = client
            .search(with_key(search, api_key)?)
            .await?
            .into_inner()
            .hits;
        let span = until.duration_since(since).unwrap_or_default();
        if hits.len() < 100 || span < std::time::Duration::from_micros(2) {
            found.extend(hits);
            continue;
        }
        let middle = since + span / 2;
        pending.push((since, middle));
        pending.push((middle, until));
    }
    Ok(found)
}
