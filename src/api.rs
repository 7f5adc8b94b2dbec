//! The gRPC edge: converts between the wire types and the engine's, resolves the tenant,
//! and wraps every RPC in a span that records the session and the outcome.
use std::collections::BTreeMap;
use std::sync::Arc;

use prost::Message as _;
use sha2::{Digest, Sha256};
use tokio_stream::StreamExt as _;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::auth::Auth;
use crate::budget::{self, Report};
use crate::engine::{self, Engine};
use crate::error::{Error, Result};
use crate::events::{self, EventDetail, EventKind, Hub, Item};
use crate::message::{Message, Part, Role, StoredMessage, ToolCall};
use crate::pb;
use crate::policy::{Policy, PolicyOverrides, SummaryPlacement, TokenizerKind};
use crate::render;
use crate::tokenize::ToolDefinition;

pub struct ContextApi {
    engine: Engine,
    auth: Arc<Auth>,
    hub: Arc<Hub>,
}

impl ContextApi {
    pub fn new(engine: Engine, auth: Arc<Auth>, hub: Arc<Hub>) -> ContextApi {
        ContextApi { engine, auth, hub }
    }
}

/// A SubscribeEvents stream.
pub type EventStream = std::pin::Pin<
    Box<
        dyn futures::Stream<Item = std::result::Result<pb::SubscribeEventsResponse, Status>> + Send,
    >,
>;

/// Runs one RPC inside its span: resolves the tenant, runs `body`, records the outcome.
async fn rpc<Req, T, F, Fut>(
    auth: &Auth,
    name: &'static str,
    session_id: &str,
    request: Request<Req>,
    body: F,
) -> std::result::Result<Response<T>, Status>
where
    F: FnOnce(i64, Req) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let span = tracing::info_span!(
        "rpc",
        rpc = name,
        session_id = %session_id,
        tenant_id = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    async move {
        let result = async {
            let tenant = auth.tenant(request.metadata()).await?;
            tracing::Span::current().record("tenant_id", tenant);
            body(tenant, request.into_inner()).await
        }
        .await;
        match result {
            Ok(response) => {
                tracing::Span::current().record("outcome", "ok");
                Ok(Response::new(response))
            }
            Err(error) => {
                let status = Status::from(error);
                tracing::Span::current().record("outcome", format!("{:?}", status.code()));
                if matches!(status.code(), tonic::Code::Internal | tonic::Code::Unavailable) {
                    tracing::warn!(code = ?status.code(), "rpc failed");
                } else {
                    tracing::info!(code = ?status.code(), message = status.message(), "rpc rejected");
                }
                Err(status)
            }
        }
    }
    .instrument(span)
    .await
}

#[tonic::async_trait]
impl pb::context_service_server::ContextService for ContextApi {
    type SubscribeEventsStream = EventStream;

    async fn subscribe_events(
        &self,
        request: Request<pb::SubscribeEventsRequest>,
    ) -> std::result::Result<Response<EventStream>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "SubscribeEvents",
            &session_id,
            request,
            |tenant, req| async move {
                let kinds = req
                    .kinds
                    .iter()
                    .enumerate()
                    .map(|(index, &kind)| {
                        event_kind_from_pb(kind).ok_or_else(|| {
                            Error::invalid(
                                format!("kinds[{index}]"),
                                format!("{kind} is not an event kind (1 to 7)"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let subscription = events::open(
                    &self.engine,
                    tenant,
                    events::SubscribeRequest {
                        session_id: req.session_id,
                        kinds,
                        after: req.after,
                        from_now: req.from_now,
                        heartbeat_interval_ms: req.heartbeat_interval_ms,
                    },
                )
                .await?;
                let (sender, receiver) = tokio::sync::mpsc::channel(64);
                tokio::spawn(
                    events::stream(self.hub.clone(), subscription, sender)
                        .instrument(tracing::Span::current()),
                );
                let stream = tokio_stream::wrappers::ReceiverStream::new(receiver).map(item_to_pb);
                Ok(Box::pin(stream) as EventStream)
            },
        )
        .await
    }

    async fn search(
        &self,
        request: Request<pb::SearchRequest>,
    ) -> std::result::Result<Response<pb::SearchResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "Search",
            &session_id,
            request,
            |tenant, req| async move {
                let roles = req
                    .roles
                    .iter()
                    .enumerate()
                    .map(|(index, &role)| {
                        Role::from_i32(role).ok_or_else(|| {
                            Error::invalid(
                                format!("roles[{index}]"),
                                format!(
                                    "{role} is not a role (1 system, 2 user, 3 assistant, 4 tool)"
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let scope = match pb::SearchScope::try_from(req.scope) {
                    Ok(pb::SearchScope::Messages) => crate::search::Scope::Messages,
                    Ok(pb::SearchScope::Summaries) => crate::search::Scope::Summaries,
                    Ok(pb::SearchScope::Both | pb::SearchScope::Unspecified) => {
                        crate::search::Scope::Both
                    }
                    Err(_) => {
                        return Err(Error::invalid(
                            "scope",
                            format!("{} is not a search scope (0 to 3)", req.scope),
                        ));
                    }
                };
                let hits = crate::search::search(
                    &self.engine,
                    tenant,
                    crate::search::SearchRequest {
                        session_id: req.session_id,
                        query: req.query,
                        roles,
                        since: req.since.map(|t| time_from_pb("since", t)).transpose()?,
                        until: req.until.map(|t| time_from_pb("until", t)).transpose()?,
                        scope,
                        limit: req.limit,
                    },
                )
                .await?;
                Ok(pb::SearchResponse {
                    hits: hits.into_iter().map(hit_to_pb).collect(),
                })
            },
        )
        .await
    }

    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> std::result::Result<Response<pb::CreateSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "CreateSession",
            &session_id,
            request,
            |tenant, req| async move {
                let overrides = overrides_from_pb(req.policy.unwrap_or_default())?;
                let metadata: BTreeMap<String, String> = req.metadata.into_iter().collect();
                let info = self
                    .engine
                    .create_session(tenant, &req.session_id, overrides, metadata)
                    .await?;
                Ok(pb::CreateSessionResponse {
                    session: Some(session_to_pb(&info)),
                })
            },
        )
        .await
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> std::result::Result<Response<pb::GetSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "GetSession",
            &session_id,
            request,
            |tenant, req| async move {
                let info = self.engine.get_session(tenant, &req.session_id).await?;
                let (summaries, budget) = if req.include_view {
                    let (summaries, report) = self.engine.session_view(&info).await?;
                    (
                        summaries.iter().map(summary_to_pb).collect(),
                        Some(report_to_pb(&report)),
                    )
                } else {
                    (Vec::new(), None)
                };
                Ok(pb::GetSessionResponse {
                    session: Some(session_to_pb(&info)),
                    summaries,
                    budget,
                })
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> std::result::Result<Response<pb::DeleteSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "DeleteSession",
            &session_id,
            request,
            |tenant, req| async move {
                let deleted_messages = self.engine.delete_session(tenant, &req.session_id).await?;
                Ok(pb::DeleteSessionResponse { deleted_messages })
            },
        )
        .await
    }

    async fn append_turn(
        &self,
        request: Request<pb::AppendTurnRequest>,
    ) -> std::result::Result<Response<pb::AppendTurnResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "AppendTurn",
            &session_id,
            request,
            |tenant, req| async move {
                let idempotency = (!req.idempotency_key.is_empty()).then(|| {
                    let mut payload = req.clone();
                    payload.idempotency_key.clear();
                    let hash = Sha256::digest(payload.encode_to_vec()).to_vec();
                    (req.idempotency_key.clone(), hash)
                });
                let usage = req.usage.map(|usage| engine::Usage {
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cached_input_tokens: usage.cached_input_tokens,
                });
                let outcome = self
                    .engine
                    .append_turn(
                        tenant,
                        engine::AppendRequest {
                            session_id: req.session_id,
                            messages: messages_from_pb(req.messages, "messages")?,
                            expected_version: req.expected_version,
                            idempotency,
                            usage,
                        },
                    )
                    .await?;
                Ok(pb::AppendTurnResponse {
                    version: outcome.version,
                    seqs: outcome.seqs,
                    budget: Some(report_to_pb(&outcome.report)),
                    replayed: outcome.replayed,
                    evicted_seqs: outcome.evicted_seqs,
                    summarization_job_id: outcome.summarization_job_id.unwrap_or(0),
                })
            },
        )
        .await
    }

    async fn build_messages(
        &self,
        request: Request<pb::BuildMessagesRequest>,
    ) -> std::result::Result<Response<pb::BuildMessagesResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "BuildMessages",
            &session_id,
            request,
            |tenant, req| async move {
                let format = pb::OutputFormat::try_from(req.format).map_err(|_| {
                    Error::invalid("format", format!("unknown output format {}", req.format))
                })?;
                let built = self
                    .engine
                    .build_messages(
                        tenant,
                        engine::BuildRequest {
                            session_id: req.session_id,
                            system_prompt: req.system_prompt.clone(),
                            tools: tools_from_pb(req.tools),
                            max_output_tokens: req.max_output_tokens,
                        },
                    )
                    .await?;
                let first_seq = built.history.first_seq();
                let last_seq = built.history.last_seq();
                let summaries = built.summaries.iter().map(summary_to_pb).collect();
                let budget = Some(report_to_pb(&built.report));
                let views = || {
                    built
                        .leading
                        .iter()
                        .chain(built.history.iter().map(|(_, message)| message))
                };
                let (messages, json) = match format {
                    pb::OutputFormat::Unspecified | pb::OutputFormat::Neutral => (
                        built
                            .leading
                            .as_ref()
                            .map(message_to_pb)
                            .into_iter()
                            .chain(
                                built
                                    .history
                                    .iter()
                                    .map(|(stored, message)| stored_to_pb(stored, message)),
                            )
                            .collect(),
                        String::new(),
                    ),
                    pb::OutputFormat::OpenaiChat => {
                        let body = render::openai_chat(
                            &built.system_prompt,
                            views(),
                            &built.tool_definitions,
                        );
                        (Vec::new(), body)
                    }
                    pb::OutputFormat::AnthropicMessages => {
                        let body = render::anthropic_messages(
                            &built.system_prompt,
                            views(),
                            &built.tool_definitions,
                            built.report.output_reserve_tokens,
                        );
                        (Vec::new(), body)
                    }
                };
                Ok(pb::BuildMessagesResponse {
                    messages,
                    json,
                    budget,
                    version: built.version,
                    trimmed: Some(pb::Trimmed {
                        turns: built.trimmed.turns,
                        messages: built.trimmed.messages,
                        tokens: built.trimmed.tokens,
                        incomplete_step_messages: built.trimmed.incomplete_step_messages,
                        summaries: built.trimmed.summaries,
                    }),
                    first_seq,
                    last_seq,
                    system_prompt: built.system_prompt,
                    summaries,
                })
            },
        )
        .await
    }

    async fn check_budget(
        &self,
        request: Request<pb::CheckBudgetRequest>,
    ) -> std::result::Result<Response<pb::CheckBudgetResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "CheckBudget",
            &session_id,
            request,
            |tenant, req| async move {
                let report = self
                    .engine
                    .check_budget(
                        tenant,
                        engine::CheckRequest {
                            session_id: req.session_id,
                            system_prompt: req.system_prompt,
                            tools: tools_from_pb(req.tools),
                            max_output_tokens: req.max_output_tokens,
                            pending: messages_from_pb(req.pending_messages, "pending_messages")?,
                        },
                    )
                    .await?;
                Ok(pb::CheckBudgetResponse {
                    budget: Some(report_to_pb(&report)),
                })
            },
        )
        .await
    }

    async fn compact(
        &self,
        request: Request<pb::CompactRequest>,
    ) -> std::result::Result<Response<pb::CompactResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "Compact",
            &session_id,
            request,
            |tenant, req| async move {
                let mode = match pb::CompactMode::try_from(req.mode) {
                    Ok(pb::CompactMode::Unspecified | pb::CompactMode::Auto) => {
                        engine::CompactMode::Auto
                    }
                    Ok(pb::CompactMode::ClearToolResults) => engine::CompactMode::ClearToolResults,
                    Ok(pb::CompactMode::Summarize) => engine::CompactMode::Summarize,
                    Ok(pb::CompactMode::Emergency) => engine::CompactMode::Emergency,
                    Err(_) => {
                        return Err(Error::invalid(
                            "mode",
                            format!("unknown compaction mode {}", req.mode),
                        ));
                    }
                };
                let compacted = self
                    .engine
                    .compact(
                        tenant,
                        engine::CompactRequest {
                            session_id: req.session_id,
                            mode,
                            target_tokens: req.target_tokens,
                            dry_run: req.dry_run,
                            wait: wait_timeout(req.wait, req.wait_timeout_ms)?,
                        },
                    )
                    .await?;
                let (summarized_first_seq, summarized_last_seq) =
                    compacted.summarized_seqs.unwrap_or((0, 0));
                let pending = compacted
                    .job
                    .as_ref()
                    .map_or(compacted.job_id.is_some(), |job| !job.is_finished());
                Ok(pb::CompactResponse {
                    no_progress: compacted.tokens_after >= compacted.tokens_before && !pending,
                    job_id: compacted.job_id.unwrap_or(0),
                    job: compacted.job.map(job_message),
                    summarized_first_seq,
                    summarized_last_seq,
                    tokens_before: compacted.tokens_before,
                    tokens_after: compacted.tokens_after,
                    cleared_seqs: compacted.cleared_seqs,
                    version: compacted.version,
                    applied: compacted.applied,
                })
            },
        )
        .await
    }

    async fn get_job(
        &self,
        request: Request<pb::GetJobRequest>,
    ) -> std::result::Result<Response<pb::Job>, Status> {
        rpc(
            &self.auth,
            "GetJob",
            "",
            request,
            |tenant, req| async move {
                if req.job_id <= 0 {
                    return Err(Error::invalid(
                        "job_id",
                        format!("must be positive, got {}", req.job_id),
                    ));
                }
                Ok(job_message(self.engine.job(tenant, req.job_id).await?))
            },
        )
        .await
    }

    async fn expand(
        &self,
        request: Request<pb::ExpandRequest>,
    ) -> std::result::Result<Response<pb::ExpandResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            &self.auth,
            "Expand",
            &session_id,
            request,
            |tenant, req| async move {
                let target = match req.target {
                    Some(pb::expand_request::Target::Range(range)) => engine::ExpandTarget::Range {
                        first_seq: range.first_seq,
                        last_seq: range.last_seq,
                    },
                    Some(pb::expand_request::Target::List(list)) => {
                        engine::ExpandTarget::List(list.seqs)
                    }
                    Some(pb::expand_request::Target::SummaryId(id)) => {
                        engine::ExpandTarget::Summary(id)
                    }
                    None => {
                        return Err(Error::invalid(
                            "target",
                            "is required: set range (first_seq, last_seq) or list (seqs)",
                        ));
                    }
                };
                let expanded = self
                    .engine
                    .expand(
                        tenant,
                        engine::ExpandRequest {
                            session_id: req.session_id,
                            target,
                            max_tokens: req.max_tokens,
                        },
                    )
                    .await?;
                Ok(pb::ExpandResponse {
                    messages: expanded
                        .messages
                        .iter()
                        .map(|stored| stored_to_pb(stored, &stored.message))
                        .collect(),
                    total_tokens: expanded.total_tokens,
                    next_seq: expanded.next_seq,
                })
            },
        )
        .await
    }
}

// ---------------------------------------------------------------------------------------
// Conversions

fn messages_from_pb(messages: Vec<pb::Message>, list: &str) -> Result<Vec<Message>> {
    messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| message_from_pb(index, message, list))
        .collect()
}

fn message_from_pb(index: usize, message: pb::Message, list: &str) -> Result<Message> {
    let role = Role::from_i32(message.role).ok_or_else(|| {
        Error::invalid(
            format!("{list}[{index}].role"),
            "must be ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL",
        )
    })?;
    let parts = message
        .parts
        .into_iter()
        .enumerate()
        .map(|(part_index, part)| match part.part {
            Some(pb::content_part::Part::Text(text)) => Ok(Part::Text { text }),
            Some(pb::content_part::Part::Media(media))
                if i64::from(media.token_estimate) > crate::policy::MAX_TOKENS =>
            {
                Err(Error::invalid(
                    format!("{list}[{index}].parts[{part_index}].media.token_estimate"),
                    format!(
                        "must be at most {}, got {}",
                        crate::policy::MAX_TOKENS,
                        media.token_estimate
                    ),
                ))
            }
            Some(pb::content_part::Part::Media(media)) => Ok(Part::Media {
                uri: media.uri,
                mime_type: media.mime_type,
                token_estimate: media.token_estimate,
            }),
            None => Err(Error::invalid(
                format!("{list}[{index}].parts[{part_index}]"),
                "must hold text or media",
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Message {
        role,
        content: message.content,
        parts,
        reasoning: message.reasoning,
        tool_calls: message
            .tool_calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments_json,
            })
            .collect(),
        tool_call_id: message.tool_call_id,
        name: message.name,
        metadata: message.metadata.into_iter().collect(),
        pinned: message.pinned,
    })
}

fn summary_to_pb(summary: &crate::store::SummaryRow) -> pb::Summary {
    pb::Summary {
        summary_id: summary.id,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content.clone(),
        token_count: i64::from(summary.token_count),
        source_tokens: summary.source_tokens,
        facts: i64::from(summary.facts),
        facts_lost: i64::from(summary.facts_lost),
        paths: summary.retention.paths,
        paths_lost: summary.retention.paths_lost,
        commands: summary.retention.commands,
        commands_lost: summary.retention.commands_lost,
        identifiers: summary.retention.identifiers,
        identifiers_lost: summary.retention.identifiers_lost,
    }
}

/// A synthetic message (no seq: not in the log).
fn message_to_pb(message: &Message) -> pb::Message {
    pb::Message {
        role: message.role as i32,
        content: message.content.clone(),
        view_state: pb::ViewState::Full as i32,
        ..Default::default()
    }
}

/// `message` as the API shows it, with the row of the stored message it is sent for.
fn stored_to_pb(stored: &StoredMessage, message: &Message) -> pb::Message {
    pb::Message {
        role: message.role as i32,
        content: message.content.clone(),
        parts: message
            .parts
            .iter()
            .map(|part| pb::ContentPart {
                part: Some(match part {
                    Part::Text { text } => pb::content_part::Part::Text(text.clone()),
                    Part::Media {
                        uri,
                        mime_type,
                        token_estimate,
                    } => pb::content_part::Part::Media(pb::MediaRef {
                        uri: uri.clone(),
                        mime_type: mime_type.clone(),
                        token_estimate: *token_estimate,
                    }),
                }),
            })
            .collect(),
        reasoning: message.reasoning.clone(),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| pb::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments_json: call.arguments.clone(),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        name: message.name.clone(),
        metadata: message
            .metadata
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
        pinned: message.pinned,
        seq: stored.seq,
        turn: stored.turn,
        token_count: stored.token_count,
        view_state: stored.view_state as i32,
        view_token_count: stored.view_tokens,
        created_at: Some(timestamp(stored.created_at)),
    }
}

/// Compact's wait: off, or for how long (0 ms: a minute).
fn wait_timeout(wait: bool, timeout_ms: u32) -> Result<Option<std::time::Duration>> {
    const MAX_WAIT_MS: u32 = 600_000;
    if !wait {
        return Ok(None);
    }
    if timeout_ms > MAX_WAIT_MS {
        return Err(Error::invalid(
            "wait_timeout_ms",
            format!("must be at most {MAX_WAIT_MS} (10 minutes), got {timeout_ms}"),
        ));
    }
    let ms = if timeout_ms == 0 { 60_000 } else { timeout_ms };
    Ok(Some(std::time::Duration::from_millis(u64::from(ms))))
}

fn job_message(job: crate::store::JobRow) -> pb::Job {
    let state = match job.state.as_str() {
        "available" => pb::JobState::Available,
        "running" => pb::JobState::Running,
        "completed" => pb::JobState::Completed,
        "retryable" => pb::JobState::Retryable,
        "discarded" => pb::JobState::Discarded,
        "cancelled" => pb::JobState::Cancelled,
        _ => pb::JobState::Unspecified,
    };
    pb::Job {
        job_id: job.id,
        session_id: job.external_id,
        kind: job.kind,
        state: state as i32,
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        run_at: Some(timestamp(job.run_at)),
        last_error: job.last_error.unwrap_or_default(),
        result_json: job.result.map(|r| r.0.to_string()).unwrap_or_default(),
        created_at: Some(timestamp(job.created_at)),
        finished_at: job.finished_at.map(timestamp),
    }
}

fn timestamp(at: chrono::DateTime<chrono::Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: at.timestamp(),
        nanos: at.timestamp_subsec_nanos() as i32,
    }
}

fn tools_from_pb(tools: Option<pb::Tools>) -> engine::Tools {
    match tools.and_then(|tools| tools.tools) {
        None => engine::Tools::None,
        Some(pb::tools::Tools::TokenCount(count)) => engine::Tools::TokenCount(count),
        Some(pb::tools::Tools::Definitions(list)) => engine::Tools::Definitions(
            list.items
                .into_iter()
                .map(|tool| ToolDefinition {
                    name: tool.name,
                    description: tool.description,
                    parameters_json_schema: tool.parameters_json_schema,
                })
                .collect(),
        ),
    }
}

fn overrides_from_pb(policy: pb::Policy) -> Result<PolicyOverrides> {
    let tokenizer = match policy.tokenizer.map(pb::Tokenizer::try_from) {
        None | Some(Ok(pb::Tokenizer::Unspecified)) => None,
        Some(Ok(pb::Tokenizer::O200kBase)) => Some(TokenizerKind::O200kBase),
        Some(Ok(pb::Tokenizer::Cl100kBase)) => Some(TokenizerKind::Cl100kBase),
        Some(Ok(pb::Tokenizer::DeepseekV3)) => Some(TokenizerKind::DeepseekV3),
        Some(Ok(pb::Tokenizer::Heuristic)) => Some(TokenizerKind::Heuristic),
        Some(Err(_)) => return Err(Error::invalid("policy.tokenizer", "unknown tokenizer")),
    };
    let summary_placement = match policy.summary_placement.map(pb::SummaryPlacement::try_from) {
        None | Some(Ok(pb::SummaryPlacement::Unspecified)) => None,
        Some(Ok(pb::SummaryPlacement::System)) => Some(SummaryPlacement::System),
        Some(Ok(pb::SummaryPlacement::User)) => Some(SummaryPlacement::User),
        Some(Err(_)) => {
            return Err(Error::invalid(
                "policy.summary_placement",
                "unknown placement",
            ));
        }
    };
    Ok(PolicyOverrides {
        context_window_tokens: policy.context_window_tokens,
        max_output_tokens: policy.max_output_tokens,
        tokenizer,
        heuristic_chars_per_token: policy.heuristic_chars_per_token,
        clear_threshold: policy.clear_threshold,
        clear_target: policy.clear_target,
        summarize_threshold: policy.summarize_threshold,
        hard_limit: policy.hard_limit,
        fresh_tail_messages: policy.fresh_tail_messages,
        fresh_tail_tokens: policy.fresh_tail_tokens,
        tool_output_protect_tokens: policy.tool_output_protect_tokens,
        clear_min_savings_tokens: policy.clear_min_savings_tokens,
        eviction_threshold_tokens: policy.eviction_threshold_tokens,
        leaf_chunk_messages: policy.leaf_chunk_messages,
        leaf_chunk_tokens: policy.leaf_chunk_tokens,
        leaf_target_tokens: policy.leaf_target_tokens,
        condense_fanin: policy.condense_fanin,
        condensed_target_tokens: policy.condensed_target_tokens,
        summary_placement,
        summarizer_profile: policy.summarizer_profile,
        media_item_tokens: policy.media_item_tokens,
        compaction_failure_limit: policy.compaction_failure_limit,
    })
}

/// The proto value of a tokenizer.
pub(crate) fn tokenizer_to_pb(tokenizer: TokenizerKind) -> pb::Tokenizer {
    match tokenizer {
        TokenizerKind::O200kBase => pb::Tokenizer::O200kBase,
        TokenizerKind::Cl100kBase => pb::Tokenizer::Cl100kBase,
        TokenizerKind::DeepseekV3 => pb::Tokenizer::DeepseekV3,
        TokenizerKind::Heuristic => pb::Tokenizer::Heuristic,
    }
}

fn policy_to_pb(policy: &Policy) -> pb::Policy {
    pb::Policy {
        context_window_tokens: Some(policy.context_window_tokens),
        max_output_tokens: Some(policy.max_output_tokens),
        tokenizer: Some(tokenizer_to_pb(policy.tokenizer) as i32),
        heuristic_chars_per_token: Some(policy.heuristic_chars_per_token),
        clear_threshold: Some(policy.clear_threshold),
        clear_target: Some(policy.clear_target),
        summarize_threshold: Some(policy.summarize_threshold),
        hard_limit: Some(policy.hard_limit),
        fresh_tail_messages: Some(policy.fresh_tail_messages),
        fresh_tail_tokens: Some(policy.fresh_tail_tokens),
        tool_output_protect_tokens: Some(policy.tool_output_protect_tokens),
        clear_min_savings_tokens: Some(policy.clear_min_savings_tokens),
        eviction_threshold_tokens: Some(policy.eviction_threshold_tokens),
        leaf_chunk_messages: Some(policy.leaf_chunk_messages),
        leaf_chunk_tokens: Some(policy.leaf_chunk_tokens),
        leaf_target_tokens: Some(policy.leaf_target_tokens),
        condense_fanin: Some(policy.condense_fanin),
        condensed_target_tokens: Some(policy.condensed_target_tokens),
        summary_placement: Some(match policy.summary_placement {
            SummaryPlacement::System => pb::SummaryPlacement::System,
            SummaryPlacement::User => pb::SummaryPlacement::User,
        } as i32),
        summarizer_profile: Some(policy.summarizer_profile.clone()),
        media_item_tokens: Some(policy.media_item_tokens),
        compaction_failure_limit: Some(policy.compaction_failure_limit),
    }
}

fn session_to_pb(info: &engine::SessionInfo) -> pb::Session {
    let row = &info.row;
    let mean = if row.est_samples > 0 {
        row.est_abs_err_sum / row.est_samples as f64
    } else {
        0.0
    };
    pb::Session {
        session_id: row.external_id.clone(),
        policy: Some(policy_to_pb(&info.policy.in_force())),
        requested_policy: Some(policy_to_pb(&info.policy)),
        version: row.version,
        message_count: row.message_count,
        turn_count: row.turn_count,
        log_tokens: row.log_tokens,
        view_tokens: row.view_tokens,
        metadata: row.metadata.0.clone().into_iter().collect(),
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        estimator: Some(pb::EstimatorStats {
            samples: row.est_samples,
            mean_abs_error_pct: mean * 100.0,
            max_abs_error_pct: row.est_max_abs_err * 100.0,
            last_error_pct: row.est_last_err * 100.0,
            anchor_input_tokens: row.anchor_reported_tokens,
        }),
        usage_total: Some(pb::Usage {
            input_tokens: row.usage_input_tokens,
            output_tokens: row.usage_output_tokens,
            cached_input_tokens: row.usage_cached_tokens,
        }),
        compaction: Some(pb::CompactionStats {
            cleared_messages: row.cleared_messages,
            evicted_messages: row.evicted_messages,
            builds: row.builds,
            extending_builds: row.extending_builds,
            summaries_written: row.summaries_written,
            summary_tokens: row.summary_tokens,
            consecutive_failures: i64::from(row.compaction_failures),
            paused: i64::from(row.compaction_failures) >= info.policy.compaction_failure_limit,
            cache_stable_pct: if row.builds > 1 {
                row.extending_builds as f64 * 100.0 / (row.builds - 1) as f64
            } else {
                100.0
            },
        }),
    }
}

fn report_to_pb(report: &Report) -> pb::BudgetReport {
    let regions = report.regions;
    pb::BudgetReport {
        breakdown: Some(pb::BudgetBreakdown {
            system_tokens: regions.system_tokens,
            summary_tokens: regions.summary_tokens,
            history_tokens: regions.history_tokens,
            tool_tokens: regions.tool_tokens,
            output_reserve_tokens: report.output_reserve_tokens,
            total_tokens: report.estimate.total_tokens,
            context_window_tokens: report.context_window_tokens,
            headroom_tokens: report.headroom_tokens,
            estimate_source: match report.estimate.source {
                budget::Source::Anchored => pb::EstimateSource::Anchored,
                budget::Source::Tokenizer => pb::EstimateSource::Tokenizer,
                budget::Source::Calibrated => pb::EstimateSource::Calibrated,
            } as i32,
            tokenizer_total_tokens: report.estimate.tokenizer_tokens,
        }),
        status: match report.status {
            budget::Status::Ok => pb::BudgetStatus::Ok,
            budget::Status::Warn => pb::BudgetStatus::Warn,
            budget::Status::Over => pb::BudgetStatus::Over,
        } as i32,
        recommended_action: match report.action {
            budget::Action::None => pb::RecommendedAction::None,
            budget::Action::ClearToolResults => pb::RecommendedAction::ClearToolResults,
            budget::Action::Summarize => pb::RecommendedAction::Summarize,
            budget::Action::ReduceRequest => pb::RecommendedAction::ReduceRequest,
        } as i32,
        window_fraction: report.window_fraction,
    }
}

fn time_from_pb(field: &str, at: prost_types::Timestamp) -> Result<chrono::DateTime<chrono::Utc>> {
    u32::try_from(at.nanos)
        .ok()
        .and_then(|nanos| chrono::DateTime::from_timestamp(at.seconds, nanos))
        .ok_or_else(|| Error::invalid(field, "is not a valid timestamp"))
}

fn hit_to_pb(hit: crate::store::SearchHit) -> pb::SearchHit {
    pb::SearchHit {
        session_id: hit.external_id,
        seq: hit.seq,
        summary_id: hit.summary_id,
        depth: hit.depth,
        role: i32::from(hit.role),
        view_state: i32::from(hit.view_state),
        first_seq: hit.first_seq,
        last_seq: hit.last_seq,
        snippet: hit.snippet,
        rank: hit.rank,
        created_at: Some(timestamp(hit.created_at)),
    }
}

fn event_kind_from_pb(kind: i32) -> Option<EventKind> {
    Some(match pb::EventKind::try_from(kind).ok()? {
        pb::EventKind::Unspecified => return None,
        pb::EventKind::CompactionStarted => EventKind::CompactionStarted,
        pb::EventKind::CompactionCompleted => EventKind::CompactionCompleted,
        pb::EventKind::CompactionFailed => EventKind::CompactionFailed,
        pb::EventKind::ToolResultsCleared => EventKind::ToolResultsCleared,
        pb::EventKind::OutputEvicted => EventKind::OutputEvicted,
        pb::EventKind::BudgetThresholdCrossed => EventKind::BudgetThresholdCrossed,
        pb::EventKind::SessionDeleted => EventKind::SessionDeleted,
    })
}

fn item_to_pb(item: Item) -> std::result::Result<pb::SubscribeEventsResponse, Status> {
    use pb::subscribe_events_response::Item as Out;
    let item = match item {
        Item::Event(row, cursor) => Out::Event(event_to_pb(&row, cursor.encode())),
        Item::Heartbeat(cursor) => Out::Heartbeat(pb::Heartbeat {
            time: Some(timestamp(chrono::Utc::now())),
            cursor: match cursor {
                events::Cursor::Session(0) => String::new(),
                events::Cursor::Tenant(position) if position == events::Position::START => {
                    String::new()
                }
                cursor => cursor.encode(),
            },
        }),
        Item::ShuttingDown => {
            return Err(Status::unavailable(
                "the server is shutting down; subscribe again with the last cursor to resume",
            ));
        }
        Item::Failed(error) => return Err(Status::from(error)),
    };
    Ok(pb::SubscribeEventsResponse { item: Some(item) })
}

fn event_to_pb(row: &crate::store::EventRow, cursor: String) -> pb::Event {
    use pb::event::Detail;
    let compaction = |kind: events::CompactionKind| kind as i32;
    let detail = match row.detail.0.clone() {
        EventDetail::CompactionStarted {
            compaction: kind,
            job_id,
            attempt,
        } => Detail::CompactionStarted(pb::CompactionStarted {
            compaction: compaction(kind),
            job_id,
            attempt,
        }),
        EventDetail::CompactionCompleted {
            compaction: kind,
            level,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            first_seq,
            last_seq,
            summary_id,
            summaries_written,
            duration_ms,
            job_id,
        } => Detail::CompactionCompleted(pb::CompactionCompleted {
            compaction: compaction(kind),
            level,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            first_seq,
            last_seq,
            summary_id,
            summaries_written,
            duration_ms,
            job_id,
        }),
        EventDetail::CompactionFailed {
            compaction: kind,
            error,
            job_id,
            attempt,
            will_retry,
        } => Detail::CompactionFailed(pb::CompactionFailed {
            compaction: compaction(kind),
            error,
            job_id,
            attempt,
            will_retry,
        }),
        EventDetail::ToolResultsCleared {
            seqs,
            tokens_before,
            tokens_after,
        } => Detail::ToolResultsCleared(pb::ToolResultsCleared {
            seqs,
            tokens_before,
            tokens_after,
        }),
        EventDetail::OutputEvicted {
            seq,
            tool_name,
            tokens,
            preview_tokens,
        } => Detail::OutputEvicted(pb::OutputEvicted {
            seq,
            tool_name,
            tokens,
            preview_tokens,
        }),
        EventDetail::BudgetThresholdCrossed {
            previous_status,
            status,
            used_tokens,
            context_window,
        } => Detail::BudgetThresholdCrossed(pb::BudgetThresholdCrossed {
            previous_status,
            status,
            used_tokens,
            context_window,
        }),
        EventDetail::SessionDeleted => Detail::SessionDeleted(pb::SessionDeleted {}),
    };
    pb::Event {
        event_id: row.id,
        cursor,
        session_id: row.external_id.clone(),
        session_seq: row.session_seq,
        kind: i32::from(row.kind),
        created_at: Some(timestamp(row.created_at)),
        session_version: row.session_version,
        detail: Some(detail),
    }
}
