//! The engine: what each operation does, in domain terms. It validates input, calls the
//! pure core (tokenize, turns, budget) and the store. The API layer only converts
//! between the wire and these types.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::budget::{self, Anchor, Estimate, Regions, Report};
use crate::compaction;
use crate::error::{Error, Result, is_unique_violation, quoted};
use crate::events::{CompactionKind, EventDetail, EventsConfig};
use crate::limits::Limits;
use crate::llm::ModelSummarizer;
pub use crate::message::Usage;
use crate::message::{Message, Role, StoredMessage, ViewState};
use crate::policy::{MAX_TOKENS, Policy, PolicyOverrides, SummaryPlacement};
use crate::store::{
    AnchorUpdate, AppendState, AppendWrite, Appended, BuildRecord, Clearing, NewMessage,
    NewSummary, SessionRow, SessionUpdate, Store, SummarizedUpdate, SummaryRow, View,
};
use crate::store::{JobEnd, JobRow, NewJob, NotifyGate};
use crate::summarize;
use crate::tokenize::{Counter, REPLY_PRIMING, TextCounts, ToolDefinition};
use crate::turns;
pub use crate::validate::validate_session_id;
use crate::validate::{
    NUL_REASON, check_tool_references, validate_batch, validate_message, validate_tools,
    validate_usage,
};
use crate::writer::{self, Writer};

/// Texts above this size are tokenized on the blocking pool, not on the async runtime.
const INLINE_TOKENIZE_BYTES: usize = 32 * 1024;
/// Text of system prompts and tool definitions whose token counts a replica remembers
/// (an agent sends the same ones with every call; a few hundred distinct sets fit).
const REQUEST_TEXT_MEMO_BYTES: usize = 16 * 1024 * 1024;
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 200;
/// Optimistic tries of an append racing other writers of its session before it reads
/// under the row lock.
const OPTIMISTIC_APPEND_ATTEMPTS: usize = 3;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub default_policy: Policy,
    /// Largest text a message may carry, in bytes.
    pub max_content_bytes: usize,
    /// Messages per request and bytes per session.
    pub limits: Limits,
    /// Summarizer profiles by name: `None` for the extractive one, else a model.
    pub summarizers: HashMap<String, Option<Arc<ModelSummarizer>>>,
    /// Attempts a job gets before it is discarded.
    pub job_max_attempts: i32,
    /// First retry delay of a failed job; doubled per attempt, with jitter.
    pub job_backoff: Duration,
    /// Limits the NOTIFYs announcing new jobs.
    pub notify_gate: Arc<NotifyGate>,
    /// Ends of jobs someone waits for (fed by the replica's listener).
    pub job_done: broadcast::Sender<i64>,
    /// Event retention and fan-out.
    pub events: EventsConfig,
}

impl EngineConfig {
    /// Settings with the extractive summarizer only and the default job settings.
    pub fn new(default_policy: Policy, max_content_bytes: usize) -> EngineConfig {
        let mut summarizers = HashMap::new();
        summarizers.insert(EXTRACTIVE.to_string(), None);
        EngineConfig {
            default_policy,
            max_content_bytes,
            limits: Limits::default(),
            summarizers,
            job_max_attempts: 3,
            job_backoff: Duration::from_secs(2),
            notify_gate: Arc::new(NotifyGate::new(Duration::from_millis(20))),
            job_done: broadcast::channel(1024).0,
            events: EventsConfig::default(),
        }
    }
}

/// The built-in summarizer profile.
pub const EXTRACTIVE: &str = "extractive";
/// The kind of summarization jobs.
pub const SUMMARIZE_JOB: &str = "summarize";

#[derive(Clone)]
pub struct Engine {
    store: Store,
    config: Arc<EngineConfig>,
    /// Token counts of the system prompts and tool definitions requests repeat.
    request_texts: Arc<TextCounts>,
}

/// A session and its effective policy.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub row: SessionRow,
    pub policy: Policy,
}

/// Tools offered with a request.
#[derive(Debug, Clone, Default)]
pub enum Tools {
    #[default]
    None,
    Definitions(Vec<ToolDefinition>),
    TokenCount(i64),
}

#[derive(Debug, Clone)]
pub struct AppendRequest {
    pub session_id: String,
    pub messages: Vec<Message>,
    pub expected_version: Option<i64>,
    /// The key and a hash of the rest of the request.
    pub idempotency: Option<(String, Vec<u8>)>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppendOutcome {
    pub version: i64,
    pub seqs: Vec<i64>,
    pub report: Report,
    pub replayed: bool,
    /// Seqs of tool results that entered the view as a preview.
    #[serde(default)]
    pub evicted_seqs: Vec<i64>,
    /// The summarization job this append made due (or found pending), when any.
    #[serde(default)]
    pub summarization_job_id: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub session_id: String,
    pub system_prompt: String,
    pub tools: Tools,
    pub max_output_tokens: Option<i64>,
}

/// What a build left out to fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// Summaries left out of this request because even the newest turn did not fit next
    /// to them (they stay stored).
    pub summaries: i64,
    pub turns: i64,
    pub messages: i64,
    pub tokens: i64,
    pub incomplete_step_messages: i64,
}

#[derive(Debug, Clone)]
pub struct Built {
    pub history: History,
    /// The system prompt to send: the request's, with the summaries appended when they
    /// are placed there.
    pub system_prompt: String,
    /// The summaries as a leading user message, when they are placed there.
    pub leading: Option<Message>,
    /// The active summaries in the view, oldest first.
    pub summaries: Vec<SummaryRow>,
    pub report: Report,
    pub version: i64,
    pub trimmed: Trimmed,
    pub tool_definitions: Vec<ToolDefinition>,
}

/// The history a build sends: messages of the session's view (shared with the
/// replica's cache, not copied), each with its message as sent.
#[derive(Debug, Clone)]
pub struct History {
    view: View,
    /// Indexes into `view`, in order, with the message as rendered when it is not sent
    /// whole (a placeholder, a preview).
    sent: Vec<(usize, Option<Message>)>,
}

impl History {
    /// Each message sent, with its stored row.
    pub fn iter(&self) -> impl Iterator<Item = (&StoredMessage, &Message)> {
        self.sent.iter().map(|(index, rendered)| {
            let stored = &self.view[*index];
            (stored, rendered.as_ref().unwrap_or(&stored.message))
        })
    }

    pub fn first_seq(&self) -> i64 {
        self.sent
            .first()
            .map_or(0, |&(index, _)| self.view[index].seq)
    }

    pub fn last_seq(&self) -> i64 {
        self.sent
            .last()
            .map_or(0, |&(index, _)| self.view[index].seq)
    }
}

/// Which messages Expand returns.
#[derive(Debug, Clone)]
pub enum ExpandTarget {
    /// Inclusive.
    Range {
        first_seq: i64,
        last_seq: i64,
    },
    List(Vec<i64>),
    /// The raw messages a summary covers.
    Summary(i64),
}

#[derive(Debug, Clone)]
pub struct ExpandRequest {
    pub session_id: String,
    pub target: ExpandTarget,
    /// 0: no cap.
    pub max_tokens: i64,
}

#[derive(Debug, Clone)]
pub struct Expanded {
    pub messages: Vec<StoredMessage>,
    pub total_tokens: i64,
    /// The first requested seq not returned because of the cap; 0 when none.
    pub next_seq: i64,
}

/// What Compact does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactMode {
    /// Clearing, then summarization, until the target is reached.
    Auto,
    ClearToolResults,
    Summarize,
    /// The provider refused the request for length: the oldest half at once.
    Emergency,
}

#[derive(Debug, Clone)]
pub struct CompactRequest {
    pub session_id: String,
    pub mode: CompactMode,
    /// The request size to get down to; 0: the policy's clear target.
    pub target_tokens: i64,
    pub dry_run: bool,
    /// Wait this long at most for the summarization job to end.
    pub wait: Option<Duration>,
}

#[derive(Debug, Clone)]
pub struct Compacted {
    pub tokens_before: i64,
    pub tokens_after: i64,
    pub cleared_seqs: Vec<i64>,
    /// The range of messages summarized (or that would be), when any.
    pub summarized_seqs: Option<(i64, i64)>,
    /// The session's version after (unchanged when nothing was applied).
    pub version: i64,
    /// False for a dry run or when there was nothing to do.
    pub applied: bool,
    /// The summarization job enqueued (or found pending), when summarizing was due.
    pub job_id: Option<i64>,
    /// That job as it ended, or as it stood when the wait ran out.
    pub job: Option<JobRow>,
}

/// Tool results to clear: (seq, tokens as a placeholder), and the tokens saved.
#[derive(Debug, Clone, Default)]
struct ClearingPlan {
    cleared: Vec<(i64, i64)>,
    saved: i64,
}

/// A clearing that was committed: the session row after it.
struct Cleared {
    row: SessionRow,
    cleared: Vec<(i64, i64)>,
}

/// Summarization passes one build may run (each takes one chunk).
const MAX_SUMMARY_PASSES: usize = 16;

/// Tokens of framing around each summary in the request.
const SUMMARY_FRAMING_TOKENS: i64 = 4;

/// How a summarization pass runs.
#[derive(Debug, Clone)]
struct PassOptions {
    /// Who writes the summaries.
    writer: Writer,
    /// The request must shrink now: take every turn but the newest if no chunk qualifies.
    forced: bool,
    /// Compute the pass, write nothing.
    dry_run: bool,
    /// The provider refused the request for length: the oldest half of the turns (or,
    /// in a single turn, its older steps) at once, as a deterministic note.
    emergency: bool,
    /// A job to enqueue with the commit (a proper summary, later).
    follow_up: Option<NewJob>,
    /// What the COMPACTION_COMPLETED events call the pass.
    compaction: CompactionKind,
    /// The job running the pass, when one does.
    job_id: i64,
}

/// What a summarization pass covers, as indices into the view.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// Whole turns at the start of the view: `..end`.
    Turns(usize),
    /// Older steps of the newest turn, after its user message: `from..to`.
    Steps(usize, usize),
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        match self {
            Span::Turns(end) => 0..end,
            Span::Steps(from, to) => from..to,
        }
    }
}

/// The older steps of the view's newest turn, as `from..to`: from just after
/// its user message (or the start) to a step boundary — an assistant message right
/// after a completed step — that leaves at least the newest step. `None` when the turn
/// has no such boundary.
fn step_chunk(
    view: &[StoredMessage],
    starts: &[usize],
    policy: &Policy,
    newest_step_only: bool,
) -> Option<(usize, usize)> {
    let from = starts.last().map_or(0, |&start| start + 1);
    let boundaries: Vec<usize> = (from + 1..view.len())
        .filter(|&i| {
            let (before, here) = (&view[i - 1].message, &view[i].message);
            here.role == Role::Assistant
                && (before.role == Role::Tool
                    || (before.role == Role::Assistant && before.tool_calls.is_empty()))
        })
        .collect();
    // Keep the fresh tail (at least the newest step); everything older goes.
    let tokens: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
    let keep_from = if newest_step_only {
        view.len()
    } else {
        view.len() - summarize::fresh_tail_len(&tokens, policy)
    };
    let to = boundaries
        .iter()
        .copied()
        .filter(|&b| b <= keep_from)
        .max()
        .or_else(|| boundaries.first().copied())?;
    Some((from, to))
}

/// A session's view as loaded: the row, the visible messages, the active summaries.
struct ViewNow {
    row: SessionRow,
    stored: View,
    summaries: Vec<SummaryRow>,
}

impl ViewNow {
    fn total(&self, around: i64) -> i64 {
        view_estimate(
            &self.row,
            &self.stored,
            around + summary_region(&self.summaries),
        )
        .total_tokens
    }
}

/// What a run of summarization passes did.
#[derive(Default)]
struct Progress {
    summarized: Option<(i64, i64)>,
    passes: usize,
    stale: bool,
    failed: Option<crate::llm::CallError>,
}

/// Why a summarization job was enqueued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobReason {
    /// An append took the session past the summarize threshold.
    Threshold,
    /// BuildMessages had to summarize deterministically to answer within budget.
    Fallback,
    /// A Compact call.
    Compact,
}

/// A summarize job's arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SummarizeArgs {
    reason: JobReason,
    /// 0: the policy's clear target.
    target_tokens: i64,
}

/// How a summarization pass ended.
enum Pass {
    Done(Box<SummaryPass>),
    /// Nothing to take, or no level made the summary smaller than its source.
    Nothing,
    /// Another compaction committed first; nothing was written.
    Stale,
    /// The model failed and deterministic truncation was not allowed.
    Failed(crate::llm::CallError),
}

/// A committed (or, on a dry run, computed) summarization pass.
struct SummaryPass {
    /// The messages of the view it covered.
    covered: std::ops::Range<usize>,
    row: SessionRow,
    summaries: Vec<SummaryRow>,
}

/// The summaries region of a request.
fn summary_region(summaries: &[SummaryRow]) -> i64 {
    summaries
        .iter()
        .map(|s| i64::from(s.token_count) + SUMMARY_FRAMING_TOKENS)
        .sum()
}

/// The summaries as one text, oldest first.
fn summary_block(summaries: &[SummaryRow]) -> Option<String> {
    if summaries.is_empty() {
        return None;
    }
    let parts: Vec<&str> = summaries.iter().map(|s| s.content.as_str()).collect();
    Some(format!(
        "Earlier parts of this conversation, summarized:\n\n{}",
        parts.join("\n\n")
    ))
}

fn summary_row(id: i64, summary: &NewSummary) -> SummaryRow {
    SummaryRow {
        id,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content.clone(),
        token_count: i32::try_from(summary.token_count).unwrap_or(i32::MAX),
        level: summary.level,
        source_tokens: summary.source_tokens,
        facts: i32::try_from(summary.facts).unwrap_or(i32::MAX),
        facts_lost: i32::try_from(summary.facts_lost).unwrap_or(i32::MAX),
        retention: sqlx::types::Json(summary.retention),
    }
}

/// Most seqs one Expand list may name.
pub const MAX_EXPAND_SEQS: usize = 1_000;

#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub session_id: String,
    pub system_prompt: String,
    pub tools: Tools,
    pub max_output_tokens: Option<i64>,
    pub pending: Vec<Message>,
}

impl Engine {
    pub fn new(store: Store, config: EngineConfig) -> Engine {
        Engine {
            store,
            config: Arc::new(config),
            request_texts: Arc::new(TextCounts::new(REQUEST_TEXT_MEMO_BYTES)),
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Counts a request's system prompt and tools, from the remembered counts where it
    /// can.
    async fn count_request(
        &self,
        counter: Counter,
        system_prompt: &str,
        tools: Tools,
    ) -> Result<(i64, i64, Vec<ToolDefinition>)> {
        let (tool_tokens, definitions) = match tools {
            Tools::None => (0, Vec::new()),
            Tools::TokenCount(count) if !(0..=MAX_TOKENS).contains(&count) => {
                return Err(Error::invalid(
                    "tools.token_count",
                    format!("must be between 0 and {MAX_TOKENS}, got {count}"),
                ));
            }
            Tools::TokenCount(count) => (count, Vec::new()),
            Tools::Definitions(definitions) => {
                validate_tools(&definitions)?;
                (0, definitions)
            }
        };
        // Remembered counts are looked up, the rest counted and remembered: inline for a
        // small request, on the blocking pool for a large one (a lookup hashes the
        // whole text).
        let bytes = system_prompt.len()
            + definitions
                .iter()
                .map(|tool| {
                    tool.name.len() + tool.description.len() + tool.parameters_json_schema.len()
                })
                .sum::<usize>();
        let count = move |prompt: &str, definitions: &[ToolDefinition], memo: &TextCounts| {
            (
                counter.system_prompt(prompt, memo) + REPLY_PRIMING,
                counter.tool_definitions(definitions, memo),
            )
        };
        let ((system, counted_tools), definitions) = if bytes > INLINE_TOKENIZE_BYTES {
            let prompt = system_prompt.to_string();
            let memo = self.request_texts.clone();
            tokio::task::spawn_blocking(move || (count(&prompt, &definitions, &memo), definitions))
                .await
                .map_err(Error::internal)?
        } else {
            (
                count(system_prompt, &definitions, &self.request_texts),
                definitions,
            )
        };
        Ok((system, tool_tokens + counted_tools, definitions))
    }

    pub async fn create_session(
        &self,
        tenant_id: i64,
        session_id: &str,
        overrides: PolicyOverrides,
        metadata: BTreeMap<String, String>,
    ) -> Result<SessionInfo> {
        let session_id = if session_id.is_empty() {
            uuid::Uuid::new_v4().to_string()
        } else {
            validate_session_id(session_id)?;
            session_id.to_string()
        };
        if let Some((key, _)) = metadata
            .iter()
            .find(|(key, value)| key.contains('\0') || value.contains('\0'))
        {
            return Err(Error::invalid(
                format!("metadata[{}]", quoted(key)),
                NUL_REASON,
            ));
        }
        let policy = Policy::resolve(&self.config.default_policy, overrides)?;
        self.model_for(&policy)?;
        let policy_json = serde_json::to_value(&policy).map_err(Error::internal)?;
        match self
            .store
            .create_session(tenant_id, &session_id, &policy_json, &metadata)
            .await
        {
            Ok(row) => Ok(SessionInfo { row, policy }),
            Err(error) if is_unique_violation(&error) => Err(Error::AlreadyExists(format!(
                "session_id: a session named {} already exists",
                quoted(&session_id)
            ))),
            Err(error) => Err(error.into()),
        }
    }

    pub async fn get_session(&self, tenant_id: i64, session_id: &str) -> Result<SessionInfo> {
        let row = self.session_row(tenant_id, session_id).await?;
        let policy = policy_of(&row)?;
        Ok(SessionInfo { row, policy })
    }

    /// The active summaries and the budget of the next request (read-only).
    pub async fn session_view(&self, info: &SessionInfo) -> Result<(Vec<SummaryRow>, Report)> {
        let row = &info.row;
        let summaries = self.store.active_summaries(row.id).await?;
        let regions = Regions {
            system_tokens: row.last_build_system_tokens.max(REPLY_PRIMING),
            summary_tokens: row.summary_tokens,
            history_tokens: row.view_tokens,
            tool_tokens: row.last_build_tool_tokens,
        };
        let report = session_report(
            &info.policy,
            info.policy.max_output_tokens,
            row,
            regions,
            row.last_turn_tokens,
        );
        Ok((summaries, report))
    }

    pub async fn delete_session(&self, tenant_id: i64, session_id: &str) -> Result<i64> {
        validate_session_id(session_id)?;
        self.store
            .delete_session(tenant_id, session_id, &EventDetail::SessionDeleted)
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }

    async fn session_row(&self, tenant_id: i64, session_id: &str) -> Result<SessionRow> {
        validate_session_id(session_id)?;
        self.store
            .session(tenant_id, session_id)
            .await?
            .ok_or_else(|| session_not_found(session_id))
    }

    pub async fn append_turn(
        &self,
        tenant_id: i64,
        request: AppendRequest,
    ) -> Result<AppendOutcome> {
        validate_session_id(&request.session_id)?;
        self.config
            .limits
            .check_message_count("messages", request.messages.len())?;
        validate_batch(&request.messages, self.config.max_content_bytes)?;
        let usage_index = validate_usage(request.usage, &request.messages)?;
        if let Some((key, _)) = &request.idempotency
            && key.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS
        {
            return Err(Error::invalid(
                "idempotency_key",
                format!("must be at most {MAX_IDEMPOTENCY_KEY_CHARS} characters"),
            ));
        }
        if let Some((key, _)) = &request.idempotency
            && key.contains('\0')
        {
            return Err(Error::invalid("idempotency_key", NUL_REASON));
        }

        // The tool calls the batch makes or answers: what the session knows of them is
        // read with the session row.
        let mut referenced: Vec<String> = Vec::new();
        for message in &request.messages {
            referenced.extend(message.tool_calls.iter().map(|call| call.id.clone()));
            if message.role == Role::Tool {
                referenced.push(message.tool_call_id.clone());
            }
        }
        let key = request.idempotency.as_ref().map(|(key, _)| key.as_str());
        // A session's policy never changes, so the batch is tokenized once, whatever the
        // attempts.
        let mut counts = None;
        // Without a read first when this replica holds the session row as its own last
        // statement on it left it (its previous append or build): the write applies only
        // if the row is still that version — so every field decided on, the build record
        // a usage report anchors on included, is what the database holds — and the
        // batch's tool-call references hold. Appends with an idempotency key read (the
        // key's record is not in the row).
        if request.idempotency.is_none() {
            let made: HashSet<&str> = request
                .messages
                .iter()
                .flat_map(|m| m.tool_calls.iter().map(|call| call.id.as_str()))
                .collect();
            let answered: Vec<&str> = request
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool && !made.contains(m.tool_call_id.as_str()))
                .map(|m| m.tool_call_id.as_str())
                .collect();
            if let Some(state) =
                self.store
                    .cached_append_state(tenant_id, &request.session_id, &answered)
            {
                // Written, or the write refused (the row changed, a reference does not
                // hold), or a verdict on the request that the cached row might explain:
                // then a read below decides with what the database holds. Both verdicts
                // come before the write; any other error may come after it committed, and
                // is returned (deciding again could append twice).
                match self
                    .append_once(&request, usage_index, state, &mut counts)
                    .await
                {
                    Ok(Some(outcome)) => return Ok(outcome),
                    Ok(None) | Err(Error::InvalidArgument { .. } | Error::Conflict { .. }) => {}
                    Err(error) => {
                        // Whatever went wrong, the next append reads.
                        self.store.forget_cached_row(tenant_id, &request.session_id);
                        return Err(error);
                    }
                }
            }
        }
        // Optimistic: read, decide, write if the session row is unchanged. After a few
        // lost races with other writers of the session, the read takes the lock.
        for attempt in 0..=OPTIMISTIC_APPEND_ATTEMPTS {
            let lock = attempt == OPTIMISTIC_APPEND_ATTEMPTS;
            let state = self
                .store
                .append_state(tenant_id, &request.session_id, &referenced, key, lock)
                .await?
                .ok_or_else(|| session_not_found(&request.session_id))?;
            if let Some(outcome) = self
                .append_once(&request, usage_index, state, &mut counts)
                .await?
            {
                return Ok(outcome);
            }
        }
        // Unreachable in practice: the locked attempt's write cannot find the row changed.
        Err(Error::internal(
            "an append under the session's row lock found the row changed",
        ))
    }

    /// Decides one append from what `state` read and writes it; `None` when the session
    /// changed after the read (nothing written).
    async fn append_once(
        &self,
        request: &AppendRequest,
        usage_index: Option<usize>,
        mut state: AppendState,
        counted: &mut Option<Vec<i64>>,
    ) -> Result<Option<AppendOutcome>> {
        if let Some((_, hash)) = &request.idempotency
            && let Some((stored_hash, response)) = &state.idempotent
        {
            if stored_hash != hash {
                return Err(Error::invalid(
                    "idempotency_key",
                    "was already used with a different request; use a new key for a new append",
                ));
            }
            let mut outcome: AppendOutcome =
                serde_json::from_value(response.clone()).map_err(Error::internal)?;
            outcome.replayed = true;
            return Ok(Some(outcome));
        }

        // A copy: `state` lends its transaction to a tool-name lookup further down.
        let session = state.session.clone();
        let session = &session;
        if let Some(expected) = request.expected_version
            && expected != session.version
        {
            return Err(Error::Conflict {
                current_version: session.version,
                expected_version: expected,
            });
        }

        let (calls, answers) =
            check_tool_references(&state.known_calls, &request.messages, session.message_count)?;

        let policy = policy_of(session)?;
        if counted.is_none() {
            *counted = Some(count_messages(policy.counter(), &request.messages).await?);
        }
        let counts = counted.as_deref().unwrap_or_default();
        let views = evictions(&policy, &request.messages, counts, session.message_count).await?;
        let evicted = views
            .iter()
            .filter(|(state, _)| *state == ViewState::Evicted)
            .count() as i64;

        let mut turn = session.turn_count;
        let mut last_turn_tokens = session.last_turn_tokens;
        let mut new_messages = Vec::with_capacity(request.messages.len());
        for (index, (message, &tokens)) in request.messages.iter().zip(counts).enumerate() {
            let (view_state, view_tokens) = views[index];
            if message.role == Role::User {
                turn += 1;
                last_turn_tokens = 0;
            }
            last_turn_tokens += view_tokens;
            new_messages.push(NewMessage {
                seq: session.message_count + 1 + index as i64,
                turn,
                token_count: tokens,
                view_tokens,
                view_state,
                message,
            });
        }
        let seqs: Vec<i64> = new_messages.iter().map(|new| new.seq).collect();
        let content_bytes =
            (self.config.limits).session_bytes_after(session.content_bytes, &request.messages)?;
        let added_tokens: i64 = counts.iter().sum();
        let added_view_tokens: i64 = views.iter().map(|(_, tokens)| tokens).sum();
        let evicted_seqs: Vec<i64> = new_messages
            .iter()
            .filter(|new| new.view_state == ViewState::Evicted)
            .map(|new| new.seq)
            .collect();

        let anchor = usage_index.zip(request.usage).map(|(index, usage)| {
            let history_before =
                session.view_tokens + views[..index].iter().map(|(_, t)| t).sum::<i64>();
            let providers_own = policy.tokenizer.is_providers_own();
            anchor_for(
                session,
                seqs[index],
                history_before,
                usage.input_tokens,
                providers_own,
            )
        });
        let update = SessionUpdate {
            version: session.version + 1,
            message_count: session.message_count + seqs.len() as i64,
            turn_count: turn,
            log_tokens: session.log_tokens + added_tokens,
            content_bytes,
            view_tokens: session.view_tokens + added_view_tokens,
            last_turn_tokens,
            evicted,
            anchor,
            usage: request
                .usage
                .map(|u| (u.input_tokens, u.output_tokens, u.cached_input_tokens))
                .unwrap_or_default(),
        };

        let mut after = session.clone();
        after.view_tokens = update.view_tokens;
        after.last_turn_tokens = update.last_turn_tokens;
        after.message_count = update.message_count;
        if let Some(anchor) = &update.anchor {
            after.anchor_reported_tokens = anchor.reported_tokens;
            after.anchor_fixed_tokens = anchor.fixed_tokens;
            after.anchor_history_tokens = anchor.history_tokens;
            after.anchor_first_seq = anchor.first_seq;
            after.anchor_last_seq = anchor.last_seq;
            after.anchor_view_epoch = anchor.view_epoch;
        }
        let report = row_report(&policy, &after);
        // Past the summarize threshold a model-backed session gets a summarization job,
        // enqueued by this append's write unless one is pending (the extractive
        // summarizer runs within BuildMessages instead: it is deterministic and takes
        // about a millisecond).
        let summarize_at =
            (policy.summarize_threshold * policy.context_window_tokens as f64) as i64;
        let paused = i64::from(session.compaction_failures) >= policy.compaction_failure_limit
            && !request.messages.iter().any(|m| m.role == Role::User);
        let wants_job = report.estimate.total_tokens > summarize_at
            && !paused
            && self.model_for(&policy)?.is_some();
        if wants_job && state.assumed {
            // Whether a job is pending was not read: decide with a read.
            return Ok(None);
        }
        let pending_job = state.pending_jobs.get(SUMMARIZE_JOB).copied();
        let new_job = (wants_job && pending_job.is_none())
            .then(|| self.summarize_job(JobReason::Threshold, 0, false));
        let mut outcome = AppendOutcome {
            version: update.version,
            seqs,
            report,
            replayed: false,
            evicted_seqs,
            summarization_job_id: if wants_job { pending_job } else { None },
        };

        let mut events = Vec::new();
        for new in new_messages
            .iter()
            .filter(|new| new.view_state == ViewState::Evicted)
        {
            let call_id = &new.message.tool_call_id;
            let in_batch = request
                .messages
                .iter()
                .flat_map(|m| &m.tool_calls)
                .find(|call| &call.id == call_id)
                .map(|call| call.name.clone());
            let tool_name = match in_batch {
                Some(name) => name,
                None => self.store.tool_name(&mut state, call_id).await?,
            };
            events.push(EventDetail::OutputEvicted {
                seq: new.seq,
                tool_name,
                tokens: new.token_count,
                preview_tokens: new.view_tokens,
            });
        }
        let budget_status =
            budget_crossing(session.budget_status, &report).map(|(status, event)| {
                events.push(event);
                status
            });
        // The stored response: the job id, when this write enqueues one, is filled in
        // by the write itself.
        let stored = match &request.idempotency {
            Some(_) => Some(serde_json::to_value(&outcome).map_err(Error::internal)?),
            None => None,
        };
        let notify = new_job.is_some() && self.config.notify_gate.take();
        let write = AppendWrite {
            batch: &new_messages,
            calls: &calls,
            answers: &answers,
            update,
            events,
            budget_status,
            idempotency: request
                .idempotency
                .as_ref()
                .zip(stored)
                .map(|((key, hash), stored)| (key.as_str(), hash.as_slice(), stored)),
            job: new_job.as_ref().map(|job| (job, notify)),
        };
        let appended = self.store.append(state, write).await?;
        if notify && !matches!(appended, Appended::Applied { job_id: Some(_) }) {
            self.config.notify_gate.release();
        }
        match appended {
            Appended::Raced => Ok(None),
            Appended::Applied { job_id } => {
                if new_job.is_some() {
                    outcome.summarization_job_id = job_id;
                }
                Ok(Some(outcome))
            }
        }
    }

    pub async fn build_messages(&self, tenant_id: i64, request: BuildRequest) -> Result<Built> {
        let mut row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = policy_of(&row)?;
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = policy.counter();
        let (system_tokens, tool_tokens, tool_definitions) = self
            .count_request(counter, &request.system_prompt, request.tools)
            .await?;
        let mut stored = self.store.view(&row).await?;
        let mut summaries = if row.summaries_written > 0 {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        let mut fixed = system_tokens + tool_tokens + summary_region(&summaries);
        // Past the clearing threshold, old tool results become placeholders (persisted:
        // the next builds extend this view).
        let before = view_estimate(&row, &stored, fixed).total_tokens;
        let limit = policy.limit_tokens() - reserve;
        let mut compacted = false;
        let threshold = (policy.clear_threshold * policy.context_window_tokens as f64) as i64;
        // Loop guard: after repeated failures automatic compaction waits for a manual
        // Compact or a new user message (the trimming below still keeps the budget).
        let paused = i64::from(row.compaction_failures) >= policy.compaction_failure_limit;
        if before > threshold && !paused {
            let target = (policy.clear_target * policy.context_window_tokens as f64) as i64;
            // Over the limit the request cannot go out as it is: any saving helps.
            let min_savings = if before > limit {
                0
            } else {
                compaction::clear_min_savings(&policy)
            };
            let plan = plan_clearing(&policy, &stored, before - target, min_savings);
            if !plan.cleared.is_empty() {
                // When the session moved on meanwhile, the trimming below still keeps
                // this build within budget; the next build clears.
                if let Ok(cleared) = self.apply_clearing(tenant_id, &row, &policy, &plan).await? {
                    apply_to_view(stored.to_mut(), &cleared);
                    row = cleared.row;
                    compacted = true;
                }
            }
        }
        // Past the summarize threshold, or still over the limit, the oldest turns outside
        // the fresh tail go into summaries, one chunk at a time, down to the clear target:
        // one deep compaction, then many builds that extend it (the provider's prompt
        // cache survives those), rather than a small one every turn.
        let summarize_at =
            (policy.summarize_threshold * policy.context_window_tokens as f64) as i64;
        let low_water = (policy.clear_target * policy.context_window_tokens as f64) as i64;
        // A clearing that did not reach the low-water mark already cost the cached
        // prefix: summarizing in the same build costs nothing more.
        // A model-backed session is summarized by a job (enqueued at append); here only
        // when the request would not fit otherwise, deterministically, asking for a job
        // in the same transaction.
        let inline = self.model_for(&policy)?.is_none();
        let mut summarizing = compacted && inline;
        let mut progress = false;
        for _ in 0..MAX_SUMMARY_PASSES {
            let total = view_estimate(&row, &stored, fixed).total_tokens;
            summarizing |= (total > summarize_at && inline) || total > limit;
            if paused || !summarizing || total <= low_water {
                break;
            }
            let options = PassOptions {
                writer: Writer::Extractive,
                forced: true,
                dry_run: false,
                emergency: false,
                follow_up: (!inline).then(|| self.summarize_job(JobReason::Fallback, 0, false)),
                compaction: if inline {
                    CompactionKind::Summarize
                } else {
                    CompactionKind::Fallback
                },
                job_id: 0,
            };
            let pass = self
                .summarize_chunk(tenant_id, &row, &policy, &stored, &summaries, &options)
                .await?;
            let Pass::Done(pass) = pass else {
                break;
            };
            stored.to_mut().drain(pass.covered.clone());
            row = pass.row;
            summaries = pass.summaries;
            fixed = system_tokens + tool_tokens + summary_region(&summaries);
            progress = true;
        }
        // A build where compaction was due but took nothing off is a failure; any
        // progress resets the count.
        let due = summarizing && !paused;
        let failures = match (due, progress || compacted) {
            (true, false) => row.compaction_failures.saturating_add(1),
            (_, true) => 0,
            (false, false) => row.compaction_failures,
        };
        if failures != row.compaction_failures {
            self.store.set_compaction_failures(row.id, failures).await?;
            if i64::from(failures) >= policy.compaction_failure_limit {
                tracing::warn!(
                    session_id = %row.external_id,
                    failures,
                    "automatic compaction paused after repeated failures"
                );
            }
            row.compaction_failures = failures;
        }

        // Indexes into the view, which stays shared with the cache unless this build
        // changed it: a build copies only what it renders differently.
        let keep = turns::provider_valid(&stored);
        let messages: Vec<&StoredMessage> = keep.iter().map(|&index| &stored[index]).collect();
        let incomplete = (stored.len() - messages.len()) as i64;

        let anchor = anchor_of(&row);
        let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
        let last_seq = seqs.last().copied().unwrap_or(0);
        let estimate_from = |fixed: i64, cut: usize, history: i64| {
            let first_seq = seqs.get(cut).copied().unwrap_or(0);
            budget::estimate(
                anchor.as_ref(),
                row.view_epoch,
                first_seq,
                last_seq,
                fixed,
                history,
            )
        };
        let mut tokens: Vec<i64> = messages.iter().map(|m| m.view_tokens).collect();
        let starts = turns::turn_starts(&messages);
        // When even the newest turn does not fit next to the summaries, the oldest
        // summaries stay out of this request (they remain stored).
        let mut omitted_summaries = 0;
        let cut = loop {
            let fixed =
                system_tokens + tool_tokens + summary_region(&summaries[omitted_summaries..]);
            let cut = budget::fit_history(&tokens, &starts, |cut, history| {
                estimate_from(fixed, cut, history).total_tokens <= limit
            });
            if cut.is_some() || omitted_summaries == summaries.len() {
                break cut;
            }
            omitted_summaries += 1;
        };
        summaries.drain(..omitted_summaries);
        let fixed = system_tokens + tool_tokens + summary_region(&summaries);
        // Not even the newest turn fits: its previews shrink to what is left.
        let render = compaction::Render::new(&policy);
        let newest = starts.last().copied().unwrap_or(0);
        let over = |tokens: &[i64]| {
            estimate_from(fixed, newest, tokens[newest..].iter().sum()).total_tokens - limit
        };
        let excess = if cut.is_none() { over(&tokens) } else { 0 };
        let mut shrunk = render.shrink_previews(&messages, newest, &mut tokens, excess);
        let fits = !shrunk.is_empty() && over(&tokens) <= 0;
        let Some(cut) = cut.or(fits.then_some(newest)) else {
            let newest_tokens = tokens[newest..].iter().sum();
            return Err(does_not_fit(
                &policy,
                reserve,
                system_tokens,
                tool_tokens,
                newest_tokens,
            ));
        };

        let dropped_tokens: i64 = tokens[..cut].iter().sum();
        let dropped_turns = if cut == 0 {
            0
        } else {
            let whole = starts.iter().filter(|&&start| start < cut).count();
            // Messages before the first user message form one more unit.
            whole + usize::from(starts.first() != Some(&0))
        };
        let tool_names = tool_names(messages.iter().copied());
        let sent: Vec<(usize, Option<Message>)> = (cut..keep.len())
            .map(|at| {
                let message = &stored[keep[at]];
                let rendered = shrunk.remove(&at).or_else(|| {
                    (message.view_state != ViewState::Full).then(|| {
                        let name = tool_names
                            .get(&message.message.tool_call_id)
                            .map_or("unknown", String::as_str);
                        let (seq, count) = (message.seq, message.token_count);
                        render.message(&message.message, message.view_state, seq, count, name)
                    })
                });
                (keep[at], rendered)
            })
            .collect();
        let history = History { view: stored, sent };
        let history_tokens: i64 = tokens[cut..].iter().sum();
        let estimate = estimate_from(fixed, cut, history_tokens);
        let regions = Regions {
            system_tokens,
            summary_tokens: summary_region(&summaries),
            history_tokens,
            tool_tokens,
        };
        let report = budget::report(&policy, reserve, regions, estimate, true);
        let first_seq = history.first_seq();
        let record = BuildRecord {
            first_seq,
            last_seq: history.last_seq(),
            system_tokens,
            tool_tokens,
            history_tokens,
            estimate_tokens: estimate.total_tokens,
            view_epoch: row.view_epoch,
        };
        // A repeated build (a retry, a second reader) needs no write.
        let previous = last_build(&row);
        if record != previous {
            let extends = previous.first_seq > 0
                && record.first_seq == previous.first_seq
                && record.view_epoch == previous.view_epoch
                && record.last_seq >= previous.last_seq
                && record.system_tokens == previous.system_tokens
                && record.tool_tokens == previous.tool_tokens;
            self.store.record_build(row.id, record, extends).await?;
        }
        let block = summary_block(&summaries);
        let (system_prompt, leading) = match (&block, policy.summary_placement) {
            (None, _) => (request.system_prompt, None),
            (Some(block), SummaryPlacement::System) if request.system_prompt.is_empty() => {
                (block.clone(), None)
            }
            (Some(block), SummaryPlacement::System) => {
                (format!("{}\n\n{block}", request.system_prompt), None)
            }
            (Some(block), SummaryPlacement::User) => (
                request.system_prompt,
                Some(Message::text(Role::User, block)),
            ),
        };
        Ok(Built {
            history,
            system_prompt,
            leading,
            summaries,
            report,
            version: row.version,
            trimmed: Trimmed {
                turns: dropped_turns as i64,
                messages: cut as i64 + incomplete,
                tokens: dropped_tokens,
                incomplete_step_messages: incomplete,
                summaries: omitted_summaries as i64,
            },
            tool_definitions,
        })
    }

    /// Compact: clears old tool results and/or summarizes the oldest turns down to a
    /// target, or says what it would do.
    pub async fn compact(&self, tenant_id: i64, request: CompactRequest) -> Result<Compacted> {
        if request.target_tokens < 0 {
            return Err(Error::invalid(
                "target_tokens",
                format!(
                    "must be 0 (the policy's clear target) or positive, got {}",
                    request.target_tokens
                ),
            ));
        }
        let mut row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = policy_of(&row)?;
        let mut stored = self.store.view(&row).await?;
        let mut summaries = if row.summaries_written > 0 {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        // The prompt around the history: as the latest build sent it.
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let before = view_estimate(&row, &stored, around + summary_region(&summaries)).total_tokens;
        let target = if request.target_tokens > 0 {
            request.target_tokens
        } else {
            (policy.clear_target * policy.context_window_tokens as f64) as i64
        };
        let mut outcome = Compacted {
            tokens_before: before,
            tokens_after: before,
            cleared_seqs: Vec::new(),
            summarized_seqs: None,
            version: row.version,
            applied: false,
            job_id: None,
            job: None,
        };
        if matches!(
            request.mode,
            CompactMode::Auto | CompactMode::ClearToolResults
        ) {
            let plan = plan_clearing(&policy, &stored, before - target, 0);
            outcome.tokens_after -= plan.saved;
            outcome.cleared_seqs = plan.cleared.iter().map(|(seq, _)| *seq).collect();
            if !plan.cleared.is_empty() && !request.dry_run {
                match self.apply_clearing(tenant_id, &row, &policy, &plan).await? {
                    Ok(cleared) => {
                        apply_to_view(stored.to_mut(), &cleared);
                        row = cleared.row;
                        outcome.applied = true;
                    }
                    Err(current_version) => {
                        return Err(Error::Conflict {
                            current_version,
                            expected_version: row.version,
                        });
                    }
                }
            } else if !plan.cleared.is_empty() {
                let cleared = Cleared {
                    row: row.clone(),
                    cleared: plan.cleared.clone(),
                };
                apply_to_view(stored.to_mut(), &cleared);
                row.view_epoch += 1;
            }
        }
        let emergency = request.mode == CompactMode::Emergency;
        let summarize = matches!(
            request.mode,
            CompactMode::Auto | CompactMode::Summarize | CompactMode::Emergency
        );
        let total = view_estimate(&row, &stored, around + summary_region(&summaries)).total_tokens;
        if summarize && (request.dry_run || emergency) {
            // The provider just refused the request: the note is needed now, and it is
            // deterministic. A dry run previews with the extractive summarizer.
            let options = PassOptions {
                writer: Writer::Extractive,
                forced: true,
                dry_run: request.dry_run,
                emergency,
                follow_up: None,
                compaction: if emergency {
                    CompactionKind::Emergency
                } else {
                    CompactionKind::Summarize
                },
                job_id: 0,
            };
            // Emergency is one pass whatever the target: the oldest half at once.
            let (passes, target) = if emergency {
                (1, -1)
            } else {
                (MAX_SUMMARY_PASSES, target)
            };
            let mut state = ViewNow {
                row,
                stored,
                summaries,
            };
            let progress = self
                .summarize_down(
                    tenant_id, &policy, &mut state, around, target, &options, passes,
                )
                .await?;
            ViewNow {
                row,
                stored,
                summaries,
            } = state;
            outcome.summarized_seqs = progress.summarized;
            outcome.applied |= progress.passes > 0 && !request.dry_run;
            outcome.tokens_after =
                view_estimate(&row, &stored, around + summary_region(&summaries)).total_tokens;
        } else if summarize && (total > target || request.mode == CompactMode::Summarize) {
            // Summarizing is a job (the session's summarizer may be a model); with
            // `wait`, this call returns when it ends.
            let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
                return Err(session_not_found(&row.external_id));
            };
            let job = self.summarize_job(JobReason::Compact, target, request.wait.is_some());
            let (job_id, _) = tx.enqueue_job(&job, &self.config.notify_gate).await?;
            tx.commit().await?;
            outcome.job_id = Some(job_id);
            if let Some(timeout) = request.wait {
                let job = self.wait_job(tenant_id, job_id, timeout).await?;
                if let Some(result) = job.result.as_ref().map(|r| &r.0) {
                    let seq = |key: &str| result.get(key).and_then(|v| v.as_i64()).unwrap_or(0);
                    if seq("summarized_first_seq") > 0 {
                        outcome.summarized_seqs =
                            Some((seq("summarized_first_seq"), seq("summarized_last_seq")));
                        outcome.applied = true;
                    }
                }
                row = self.session_row(tenant_id, &request.session_id).await?;
                stored = self.store.view(&row).await?;
                summaries = self.store.active_summaries(row.id).await?;
                outcome.tokens_after =
                    view_estimate(&row, &stored, around + summary_region(&summaries)).total_tokens;
                outcome.job = Some(job);
            }
        }
        if !request.dry_run {
            outcome.version = row.version;
            // A manual Compact lifts the loop guard's pause.
            if row.compaction_failures != 0 {
                self.store.set_compaction_failures(row.id, 0).await?;
            }
        }
        Ok(outcome)
    }

    /// Summarization passes until the request is at most `target` (-1: exactly
    /// `max_passes` passes), there is nothing left to take, another compaction got in
    /// first, or the model failed. `state` follows what was committed.
    #[allow(clippy::too_many_arguments)]
    async fn summarize_down(
        &self,
        tenant_id: i64,
        policy: &Policy,
        state: &mut ViewNow,
        around: i64,
        target: i64,
        options: &PassOptions,
        max_passes: usize,
    ) -> Result<Progress> {
        let mut progress = Progress::default();
        for _ in 0..max_passes {
            let total = view_estimate(
                &state.row,
                &state.stored,
                around + summary_region(&state.summaries),
            )
            .total_tokens;
            if total <= target {
                break;
            }
            let pass = self
                .summarize_chunk(
                    tenant_id,
                    &state.row,
                    policy,
                    &state.stored,
                    &state.summaries,
                    options,
                )
                .await?;
            let pass = match pass {
                Pass::Done(pass) => pass,
                Pass::Nothing => break,
                Pass::Stale => {
                    progress.stale = true;
                    break;
                }
                Pass::Failed(error) => {
                    progress.failed = Some(error);
                    break;
                }
            };
            let covered = (
                state.stored[pass.covered.start].seq,
                state.stored[pass.covered.end - 1].seq,
            );
            progress.summarized = Some(match progress.summarized {
                Some((first, _)) => (first, covered.1),
                None => covered,
            });
            state.stored.to_mut().drain(pass.covered.clone());
            state.row = pass.row;
            state.summaries = pass.summaries;
            progress.passes += 1;
        }
        Ok(progress)
    }

    /// The model a policy's summarizer profile names; `None` for the extractive one.
    fn model_for(&self, policy: &Policy) -> Result<Option<Arc<ModelSummarizer>>> {
        match self.config.summarizers.get(&policy.summarizer_profile) {
            Some(model) => Ok(model.clone()),
            None => Err(Error::invalid(
                "policy.summarizer_profile",
                format!(
                    "names {}, which this server does not configure (configured: {})",
                    quoted(&policy.summarizer_profile),
                    self.profile_names()
                ),
            )),
        }
    }

    fn profile_names(&self) -> String {
        let mut names: Vec<&str> = self.config.summarizers.keys().map(String::as_str).collect();
        names.sort_unstable();
        names.join(", ")
    }

    fn summarize_job(&self, reason: JobReason, target_tokens: i64, wait: bool) -> NewJob {
        NewJob {
            kind: SUMMARIZE_JOB,
            args: serde_json::to_value(SummarizeArgs {
                reason,
                target_tokens,
            })
            .unwrap_or_default(),
            // A client waiting on Compact goes before background work.
            priority: if reason == JobReason::Compact { 10 } else { 0 },
            max_attempts: self.config.job_max_attempts,
            notify_done: wait,
        }
    }

    /// A job of the tenant's.
    pub async fn job(&self, tenant_id: i64, job_id: i64) -> Result<JobRow> {
        self.store
            .job(tenant_id, job_id)
            .await?
            .ok_or_else(|| Error::not_found(format!("job {job_id}")))
    }

    /// The job once it has ended, or as it stands when `timeout` runs out.
    pub async fn wait_job(&self, tenant_id: i64, job_id: i64, timeout: Duration) -> Result<JobRow> {
        let deadline = tokio::time::Instant::now() + timeout;
        // Subscribed before reading, so an end announced in between is not missed.
        let mut done = self.config.job_done.subscribe();
        loop {
            let job = self.job(tenant_id, job_id).await?;
            if job.is_finished() || tokio::time::Instant::now() >= deadline {
                return Ok(job);
            }
            // Announcements come from every replica's workers; the re-read every
            // second covers a listener that is reconnecting.
            let tick = (tokio::time::Instant::now() + Duration::from_secs(1)).min(deadline);
            loop {
                tokio::select! {
                    announced = done.recv() => match announced {
                        Ok(id) if id != job_id => continue,
                        Err(broadcast::error::RecvError::Closed) => {
                            tokio::time::sleep_until(tick).await;
                        }
                        _ => {}
                    },
                    _ = tokio::time::sleep_until(tick) => {}
                }
                break;
            }
        }
    }

    /// Runs a claimed job; says how it ended. `final_attempt`: the last one it gets.
    pub async fn run_job(&self, job: &JobRow, final_attempt: bool) -> JobEnd {
        if job.kind != SUMMARIZE_JOB {
            return JobEnd::Failed {
                error: format!("unknown job kind {:?}", job.kind),
                retry_in: None,
            };
        }
        let end = match self.run_summarize_job(job, final_attempt).await {
            Ok(end) => job.fallback_end(end),
            Err(Error::NotFound { .. }) => JobEnd::Cancelled("the session was deleted".into()),
            Err(error) => {
                tracing::warn!(job_id = job.id, %error, "job failed");
                JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: Some(self.backoff(job.attempts)),
                }
            }
        };
        if let JobEnd::Failed { error, retry_in } = &end {
            let failed = EventDetail::CompactionFailed {
                compaction: CompactionKind::Summarize,
                error: error.clone(),
                job_id: job.id,
                attempt: job.attempts,
                will_retry: retry_in.is_some() && !final_attempt,
            };
            if let Err(error) = self.announce(job, failed).await {
                tracing::warn!(job_id = job.id, %error, "could not record the job's failure event");
            }
        }
        end
    }

    /// Writes an event about a job's session in a transaction of its own.
    async fn announce(&self, job: &JobRow, detail: EventDetail) -> Result<()> {
        let Some(mut tx) = self
            .store
            .lock_session(job.tenant_id, &job.external_id)
            .await?
        else {
            return Err(session_not_found(&job.external_id));
        };
        if tx.session.id != job.session_id {
            return Err(session_not_found(&job.external_id));
        }
        tx.add_event(detail);
        tx.commit().await?;
        Ok(())
    }

    /// Exponential backoff with jitter: base × 2^(attempt-1) × [0.5, 1.5), at most 10 min.
    fn backoff(&self, attempt: i32) -> Duration {
        let base = self.config.job_backoff.as_secs_f64() * 2f64.powi((attempt - 1).clamp(0, 20));
        let mut byte = [0u8; 1];
        let _ = getrandom::fill(&mut byte);
        let jitter = 0.5 + f64::from(byte[0]) / 256.0;
        Duration::from_secs_f64((base * jitter).min(600.0))
    }

    async fn run_summarize_job(&self, job: &JobRow, final_attempt: bool) -> Result<JobEnd> {
        let args: SummarizeArgs = serde_json::from_value(job.args.0.clone())
            .map_err(|_| Error::invalid("args", "a summarize job's arguments are not readable"))?;
        let row = self.session_row(job.tenant_id, &job.external_id).await?;
        if row.id != job.session_id {
            return Err(session_not_found(&job.external_id));
        }
        let policy = policy_of(&row)?;
        let model = match self.model_for(&policy) {
            Ok(model) => model,
            Err(error) => {
                return Ok(JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: None,
                });
            }
        };
        let failure = Arc::new(std::sync::Mutex::new(job.fallback_failure()));
        let writer = match model {
            _ if job.fallback => Writer::Truncation,
            None => Writer::Extractive,
            Some(model) => Writer::Model {
                model,
                truncate: final_attempt,
                failure: failure.clone(),
            },
        };
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let mut state = self.view_now(row).await?;
        let tokens_before = state.total(around);
        let summarize_at =
            (policy.summarize_threshold * policy.context_window_tokens as f64) as i64;
        let paused = i64::from(state.row.compaction_failures) >= policy.compaction_failure_limit;
        if args.reason != JobReason::Compact && (tokens_before <= summarize_at || paused) {
            // Already done (by BuildMessages' fallback or an earlier job), or paused.
            return Ok(JobEnd::Completed(serde_json::json!({
                "due": false,
                "tokens_before": tokens_before,
                "tokens_after": tokens_before,
            })));
        }
        let target = if args.target_tokens > 0 {
            args.target_tokens
        } else {
            (policy.clear_target * policy.context_window_tokens as f64) as i64
        };
        self.announce(
            job,
            EventDetail::CompactionStarted {
                compaction: CompactionKind::Summarize,
                job_id: job.id,
                attempt: job.attempts,
            },
        )
        .await?;
        let options = PassOptions {
            writer,
            forced: true,
            dry_run: false,
            emergency: false,
            follow_up: None,
            compaction: CompactionKind::Summarize,
            job_id: job.id,
        };
        let mut summarized: Option<(i64, i64)> = None;
        let mut passes = 0;
        // Another compaction committing first discards this pass's result (never
        // applied twice); the job starts over from what is there now.
        for _ in 0..3 {
            let progress = self
                .summarize_down(
                    job.tenant_id,
                    &policy,
                    &mut state,
                    around,
                    target,
                    &options,
                    MAX_SUMMARY_PASSES,
                )
                .await?;
            passes += progress.passes;
            if let Some((first, last)) = progress.summarized {
                summarized = Some((summarized.map_or(first, |(f, _)| f), last));
            }
            if let Some(error) = progress.failed {
                return Ok(JobEnd::Failed {
                    error: error.to_string(),
                    retry_in: Some(self.backoff(job.attempts)),
                });
            }
            if !progress.stale {
                break;
            }
            let row = self.session_row(job.tenant_id, &job.external_id).await?;
            state = self.view_now(row).await?;
        }
        let tokens_after = state.total(around);
        let (first, last) = summarized.unwrap_or((0, 0));
        let result = serde_json::json!({
            "due": true,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "summarized_first_seq": first,
            "summarized_last_seq": last,
            "passes": passes,
        });
        let model_failure = failure.lock().ok().and_then(|mut f| f.take());
        if let Some(error) = model_failure {
            // The last attempt fell back to deterministic truncation: the session made
            // progress, the job ends with the model's error.
            return Ok(JobEnd::Failed {
                error: format!("{error}; deterministic truncation was applied instead"),
                retry_in: None,
            });
        }
        Ok(JobEnd::Completed(result))
    }

    async fn view_now(&self, row: SessionRow) -> Result<ViewNow> {
        let stored = self.store.view(&row).await?;
        let summaries = if row.summaries_written > 0 {
            self.store.active_summaries(row.id).await?
        } else {
            Vec::new()
        };
        Ok(ViewNow {
            row,
            stored,
            summaries,
        })
    }

    /// Summarizes the leaf chunk at the start of `view` — whole turns outside the fresh
    /// tail — or, when the request must shrink and the newest turn is all that is left,
    /// the older steps of that turn (its user message stays). Extractive, three levels
    /// until the summary is smaller than what it covers; then runs of same-depth
    /// summaries are condensed, and it commits — only when no other compaction of the
    /// session committed meanwhile (appends are fine: they come after the chunk).
    async fn summarize_chunk(
        &self,
        tenant_id: i64,
        row: &SessionRow,
        policy: &Policy,
        view: &[StoredMessage],
        active: &[SummaryRow],
        options: &PassOptions,
    ) -> Result<Pass> {
        let started = std::time::Instant::now();
        let PassOptions {
            forced,
            dry_run,
            emergency,
            ..
        } = *options;
        let tokens: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
        let starts = turns::turn_starts(view);
        let chunk_end = if emergency {
            // The oldest half of the turns (at least one), never the newest.
            let boundaries: Vec<usize> = starts.iter().copied().filter(|&s| s > 0).collect();
            boundaries
                .get(boundaries.len().saturating_sub(1) / 2)
                .copied()
        } else {
            summarize::leaf_chunk(&tokens, &starts, policy, forced)
        };
        let span = match chunk_end {
            Some(end) => Span::Turns(end),
            None if forced || emergency => match step_chunk(view, &starts, policy, emergency) {
                Some((from, to)) => Span::Steps(from, to),
                None => return Ok(Pass::Nothing),
            },
            None => return Ok(Pass::Nothing),
        };
        let covered = span.range();
        let chunk: Vec<Message> = view[covered.clone()]
            .iter()
            .map(|m| m.message.clone())
            .collect();
        let source_tokens: i64 = tokens[covered.clone()].iter().sum();
        let (first_seq, last_seq) = (view[covered.start].seq, view[covered.end - 1].seq);
        // Step summaries of turns now summarized whole become the new summary's sources.
        let children: Vec<SummaryRow> = active
            .iter()
            .filter(|s| s.first_seq >= first_seq && s.last_seq <= last_seq)
            .cloned()
            .collect();
        let child_ids: Vec<i64> = children.iter().map(|s| s.id).collect();
        let others: Vec<SummaryRow> = active
            .iter()
            .filter(|s| !child_ids.contains(&s.id))
            .cloned()
            .collect();
        let previous = others
            .iter()
            .rev()
            .find(|s| s.last_seq < first_seq)
            .map(|s| s.content.clone());
        let counter = policy.counter();
        let target = summarize::leaf_target(policy);
        let sizes = (
            policy.condense_fanin as usize,
            summarize::condensed_target(policy),
        );
        let child_texts: Vec<String> = children.iter().map(|s| s.content.clone()).collect();
        // What the new summary replaces: the visible messages and the step summaries.
        let replaced_tokens = source_tokens + summary_region(&children);
        let task = writer::Task {
            messages: chunk,
            children: child_texts,
            covered: None,
            previous,
            span: (first_seq, last_seq, 0),
            target_tokens: target,
            source_tokens: replaced_tokens,
        };
        let leaf = match writer::write_summary(&options.writer, &counter, task).await {
            Ok(Some(mut leaf)) => {
                if emergency {
                    let note = match span {
                        Span::Turns(_) => {
                            "Emergency compaction (the provider refused the request for its length): the oldest half of the conversation is reduced to this note.\n"
                        }
                        Span::Steps(..) => {
                            "Emergency compaction (the provider refused the request for its length): one long turn was all there was; its user message and its newest step are kept, the steps between are reduced to this note.\n"
                        }
                    };
                    leaf.content = format!("{note}{}", leaf.content);
                    leaf.token_count = counter.text(&leaf.content);
                }
                leaf
            }
            Ok(None) => {
                tracing::warn!(session_id = %row.external_id, first_seq, last_seq, "no summary level made progress");
                return Ok(Pass::Nothing);
            }
            Err(error) => return Ok(Pass::Failed(error)),
        };
        let log = (&self.store, row.id);
        let by = &options.writer;
        let condensed =
            match writer::plan_condensing(by, &counter, &others, &leaf, sizes, log).await? {
                Ok(condensed) => condensed,
                Err(error) => return Ok(Pass::Failed(error)),
            };
        let summaries_after = |leaf_id: i64, ids: &[i64]| {
            let mut all: Vec<SummaryRow> = others
                .iter()
                .filter(|s| !condensed.iter().any(|step| step.children.contains(&s.id)))
                .cloned()
                .collect();
            match condensed.last() {
                Some(step) => all.push(summary_row(*ids.last().unwrap_or(&leaf_id), &step.summary)),
                None => all.push(summary_row(leaf_id, &leaf)),
            }
            all.sort_by_key(|s| s.first_seq);
            all
        };
        let moved = |mut after: SessionRow| {
            if let Span::Turns(_) = span {
                after.view_first_seq = last_seq + 1;
            }
            after.view_tokens -= source_tokens;
            after.view_epoch += 1;
            after
        };
        if dry_run {
            let summaries = summaries_after(0, &[]);
            let mut after = moved(row.clone());
            after.summary_tokens = summary_region(&summaries);
            return Ok(Pass::Done(Box::new(SummaryPass {
                covered,
                row: after,
                summaries,
            })));
        }

        let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
            return Err(session_not_found(&row.external_id));
        };
        // Another compaction committed meanwhile: this chunk may be covered already.
        // Appends since are fine (they come after the chunk).
        if tx.session.id != row.id || tx.session.view_epoch != row.view_epoch {
            return Ok(Pass::Stale);
        }
        let mut after = moved(tx.session.clone());
        let leaf_id = tx.insert_summary(&leaf, &child_ids).await?;
        let mut ids: Vec<i64> = Vec::new();
        let mut written = 1;
        let mut pending_children: Vec<i64> = Vec::new();
        for (index, step) in condensed.iter().enumerate() {
            // The first step condenses stored summaries (and the new leaf); later steps
            // condense the previous step's output with stored ones.
            let mut children = step.children.clone();
            if index == 0 {
                children.push(leaf_id);
            } else {
                children.append(&mut pending_children);
            }
            let id = tx.insert_summary(&step.summary, &children).await?;
            pending_children.push(id);
            ids.push(id);
            written += 1;
        }
        if let Span::Steps(..) = span {
            let seqs: Vec<i64> = view[covered.clone()].iter().map(|m| m.seq).collect();
            tx.mark_summarized(&seqs).await?;
        }
        if let Some(job) = &options.follow_up {
            tx.enqueue_job(job, &self.config.notify_gate).await?;
        }
        let summaries = summaries_after(leaf_id, &ids);
        let summary_tokens = summary_region(&summaries);
        after.summary_tokens = summary_tokens;
        after.summaries_written += written;
        after.version += 1;
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let view_total: i64 = tokens.iter().sum();
        let level = condensed
            .iter()
            .map(|step| step.summary.level)
            .fold(leaf.level, i16::max);
        if options.job_id == 0 {
            // Within a call the pass starts and commits at once; a job announced its
            // start when it began.
            tx.add_event(EventDetail::CompactionStarted {
                compaction: options.compaction,
                job_id: 0,
                attempt: 0,
            });
        }
        tx.add_event(EventDetail::CompactionCompleted {
            compaction: options.compaction,
            level: i32::from(level),
            tokens_before: around + summary_region(active) + view_total,
            tokens_after: around + summary_tokens + view_total - source_tokens,
            messages_before: (view.len() + active.len()) as i64,
            messages_after: (view.len() - covered.len() + summaries.len()) as i64,
            first_seq,
            last_seq,
            summary_id: ids.last().copied().unwrap_or(leaf_id),
            summaries_written: written as i32,
            duration_ms: started.elapsed().as_millis() as i64,
            job_id: options.job_id,
        });
        note_budget(&mut tx, &row_report(policy, &after));
        tx.commit_summarized(SummarizedUpdate {
            view_first_seq: after.view_first_seq,
            view_tokens: after.view_tokens,
            summary_tokens,
            summaries_written: written,
        })
        .await?;
        tracing::info!(
            session_id = %row.external_id,
            first_seq,
            last_seq,
            source_tokens,
            summary_tokens = leaf.token_count,
            level = leaf.level,
            steps = matches!(span, Span::Steps(..)),
            condensed = condensed.len(),
            "summarized"
        );
        Ok(Pass::Done(Box::new(SummaryPass {
            covered,
            row: after,
            summaries,
        })))
    }

    /// Persists a clearing plan made on `row`'s version; `Err(current version)` when the
    /// session has changed since (the plan may no longer be right).
    async fn apply_clearing(
        &self,
        tenant_id: i64,
        row: &SessionRow,
        policy: &Policy,
        plan: &ClearingPlan,
    ) -> Result<std::result::Result<Cleared, i64>> {
        let Some(mut tx) = self.store.lock_session(tenant_id, &row.external_id).await? else {
            return Err(session_not_found(&row.external_id));
        };
        if tx.session.id != row.id || tx.session.version != row.version {
            return Ok(Err(tx.session.version));
        }
        let mut after = tx.session.clone();
        after.view_tokens -= plan.saved;
        after.view_epoch += 1;
        after.version += 1;
        after.cleared_messages += plan.cleared.len() as i64;
        let around = row.last_build_system_tokens.max(REPLY_PRIMING) + row.last_build_tool_tokens;
        let tokens_before = around + row.summary_tokens + row.view_tokens;
        tx.add_event(EventDetail::ToolResultsCleared {
            seqs: plan.cleared.iter().map(|(seq, _)| *seq).collect(),
            tokens_before,
            tokens_after: tokens_before - plan.saved,
        });
        note_budget(&mut tx, &row_report(policy, &after));
        tx.commit_clearing(&Clearing {
            cleared: plan.cleared.clone(),
            view_tokens: after.view_tokens,
        })
        .await?;
        tracing::info!(
            session_id = %row.external_id,
            cleared = plan.cleared.len(),
            tokens_saved = plan.saved,
            "cleared old tool results"
        );
        Ok(Ok(Cleared {
            row: after,
            cleared: plan.cleared.clone(),
        }))
    }

    /// Original messages by seq, byte-exact, within an optional token cap.
    pub async fn expand(&self, tenant_id: i64, request: ExpandRequest) -> Result<Expanded> {
        if request.max_tokens < 0 {
            return Err(Error::invalid(
                "max_tokens",
                format!("must be 0 (no cap) or positive, got {}", request.max_tokens),
            ));
        }
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let target = match request.target {
            ExpandTarget::Summary(id) => {
                let summary = self.store.summary(row.id, id).await?.ok_or_else(|| {
                    Error::not_found(format!(
                        "summary {id} of session {}",
                        quoted(&request.session_id)
                    ))
                })?;
                ExpandTarget::Range {
                    first_seq: summary.first_seq,
                    last_seq: summary.last_seq,
                }
            }
            target => target,
        };
        let request = ExpandRequest { target, ..request };
        let wanted = validate_expand_target(&request.target)?;
        let last_seq = row.message_count;
        match &request.target {
            ExpandTarget::Range { last_seq: end, .. } if *end > last_seq => {
                return Err(Error::invalid(
                    "range.last_seq",
                    format!("{end} is past the session's last seq ({last_seq})"),
                ));
            }
            ExpandTarget::List(_) => {
                if let Some(past) = wanted.iter().find(|&&seq| seq > last_seq) {
                    return Err(Error::invalid(
                        "list.seqs",
                        format!("{past} is past the session's last seq ({last_seq})"),
                    ));
                }
            }
            ExpandTarget::Range { .. } | ExpandTarget::Summary(_) => {}
        }
        let (messages, requested_after) = match request.target {
            ExpandTarget::Range {
                first_seq,
                last_seq,
            } => {
                let messages = self
                    .store
                    .messages_in_range(row.id, first_seq, last_seq, request.max_tokens)
                    .await?;
                let next = messages.last().map_or(first_seq, |m| m.seq + 1);
                (messages, (next <= last_seq).then_some(next))
            }
            ExpandTarget::List(_) | ExpandTarget::Summary(_) => {
                let mut messages = self.store.messages_by_seq(row.id, &wanted).await?;
                let kept = within_cap(&messages, request.max_tokens);
                let next = messages.get(kept).map(|m| m.seq);
                messages.truncate(kept);
                (messages, next)
            }
        };
        Ok(Expanded {
            total_tokens: messages.iter().map(|m| m.token_count).sum(),
            messages,
            next_seq: requested_after.unwrap_or(0),
        })
    }

    pub async fn check_budget(&self, tenant_id: i64, request: CheckRequest) -> Result<Report> {
        let row = self.session_row(tenant_id, &request.session_id).await?;
        let policy = policy_of(&row)?;
        let reserve = output_reserve(&policy, request.max_output_tokens)?;
        let counter = policy.counter();
        let (system_tokens, tool_tokens, _) = self
            .count_request(counter, &request.system_prompt, request.tools)
            .await?;
        (self.config.limits).check_message_count("pending_messages", request.pending.len())?;
        for (index, message) in request.pending.iter().enumerate() {
            validate_message(
                index,
                message,
                self.config.max_content_bytes,
                "pending_messages",
            )?;
        }
        let pending = count_messages(counter, &request.pending).await?;
        let mut newest_turn = row.last_turn_tokens;
        for (message, tokens) in request.pending.iter().zip(&pending) {
            if message.role == Role::User {
                newest_turn = 0;
            }
            newest_turn += tokens;
        }
        let mut after = row.clone();
        after.view_tokens += pending.iter().sum::<i64>();
        after.message_count += pending.len() as i64;
        let regions = Regions {
            system_tokens,
            summary_tokens: row.summary_tokens,
            history_tokens: after.view_tokens,
            tool_tokens,
        };
        Ok(session_report(
            &policy,
            reserve,
            &after,
            regions,
            newest_turn,
        ))
    }
}

/// The budget report of a session's next request as its row stands: the system prompt
/// and tools of the latest build, the summaries and the view.
fn row_report(policy: &Policy, row: &SessionRow) -> Report {
    let regions = Regions {
        system_tokens: row.last_build_system_tokens.max(REPLY_PRIMING),
        summary_tokens: row.summary_tokens,
        history_tokens: row.view_tokens,
        tool_tokens: row.last_build_tool_tokens,
    };
    session_report(
        policy,
        policy.max_output_tokens,
        row,
        regions,
        row.last_turn_tokens,
    )
}

/// Announces a move to another budget status (either way) with the transaction.
fn note_budget(tx: &mut crate::store::SessionTx, report: &Report) {
    if let Some((status, event)) = budget_crossing(tx.budget_status(), report) {
        tx.add_event(event);
        tx.set_budget_status(status);
    }
}

/// The session's new budget status and its BUDGET_THRESHOLD_CROSSED event, when
/// `report` moves it off `previous`.
fn budget_crossing(previous: i16, report: &Report) -> Option<(i16, EventDetail)> {
    let status = match report.status {
        budget::Status::Ok => 1,
        budget::Status::Warn => 2,
        budget::Status::Over => 3,
    };
    (status != previous).then(|| {
        (
            status,
            EventDetail::BudgetThresholdCrossed {
                previous_status: i32::from(previous),
                status: i32::from(status),
                used_tokens: report.estimate.total_tokens,
                context_window: report.context_window_tokens,
            },
        )
    })
}

fn session_not_found(session_id: &str) -> Error {
    Error::not_found(format!("session {}", quoted(session_id)))
}

fn policy_of(row: &SessionRow) -> Result<Policy> {
    serde_json::from_value(row.policy.0.clone()).map_err(Error::internal)
}

fn last_build(row: &SessionRow) -> BuildRecord {
    BuildRecord {
        view_epoch: row.last_build_view_epoch,
        first_seq: row.last_build_first_seq,
        last_seq: row.last_build_last_seq,
        system_tokens: row.last_build_system_tokens,
        tool_tokens: row.last_build_tool_tokens,
        history_tokens: row.last_build_history_tokens,
        estimate_tokens: row.last_build_estimate_tokens,
    }
}

fn anchor_of(row: &SessionRow) -> Option<Anchor> {
    (row.anchor_reported_tokens > 0).then_some(Anchor {
        reported_tokens: row.anchor_reported_tokens,
        fixed_tokens: row.anchor_fixed_tokens,
        history_tokens: row.anchor_history_tokens,
        first_seq: row.anchor_first_seq,
        last_seq: row.anchor_last_seq,
        view_epoch: row.anchor_view_epoch,
        delta_ratio: row.anchor_delta_ratio,
    })
}

/// The budget of the next request over the session's whole view, from its aggregates.
fn session_report(
    policy: &Policy,
    reserve: i64,
    row: &SessionRow,
    regions: Regions,
    newest_turn_tokens: i64,
) -> Report {
    let estimate: Estimate = budget::estimate(
        anchor_of(row).as_ref(),
        row.view_epoch,
        row.view_first_seq,
        row.message_count,
        regions.fixed_tokens(),
        regions.history_tokens,
    );
    let minimum = regions.fixed_tokens() + newest_turn_tokens;
    let minimum_fits = minimum <= policy.limit_tokens() - reserve;
    budget::report(policy, reserve, regions, estimate, minimum_fits)
}

/// The anchor a usage report sets, and how far off ctxd's estimate of that request was.
/// The request that produced the assistant message at `assistant_seq` is the latest
/// build when that build ended right before it; otherwise the whole view before it.
/// The marginal ratio moves with the growth since the previous anchor; a session's first
/// report sets its prior ([`budget::first_delta_ratio`]). With `providers_own` (the
/// session counts with the tokenizer of the model it reports usage for) the ratio stays
/// 1: there is no tokenizer difference to learn, and what differs on growth is framing,
/// a few tokens per message, which a ratio would blow up on small steps and carry over
/// to large ones.
fn anchor_for(
    session: &SessionRow,
    assistant_seq: i64,
    history_before: i64,
    reported: i64,
    providers_own: bool,
) -> AnchorUpdate {
    let previous = anchor_of(session);
    let built_right_before =
        session.last_build_first_seq > 0 && session.last_build_last_seq == assistant_seq - 1;
    let fixed = session.last_build_system_tokens.max(REPLY_PRIMING)
        + session.last_build_tool_tokens
        + session.summary_tokens;
    let (first_seq, history, predicted) = if built_right_before {
        (
            session.last_build_first_seq,
            session.last_build_history_tokens,
            session.last_build_estimate_tokens,
        )
    } else {
        let estimate = budget::estimate(
            previous.as_ref(),
            session.view_epoch,
            session.view_first_seq,
            assistant_seq - 1,
            fixed,
            history_before,
        );
        (
            session.view_first_seq,
            history_before,
            estimate.total_tokens,
        )
    };
    let error = (reported > 0).then(|| (predicted - reported) as f64 / reported as f64);
    let delta_ratio = match previous {
        _ if providers_own => 1.0,
        Some(previous)
            if previous.view_epoch == session.view_epoch
                && previous.first_seq == first_seq
                && previous.last_seq < assistant_seq - 1 =>
        {
            let growth = (fixed + history) - (previous.fixed_tokens + previous.history_tokens);
            previous.next_delta_ratio(reported, growth)
        }
        Some(previous) => previous.delta_ratio,
        // The session's first report: a prior from what it says about the content, the
        // tool definitions being where providers' templates differ most.
        None => budget::first_delta_ratio(
            reported,
            fixed + history,
            fixed + history - session.last_build_tool_tokens,
        ),
    };
    AnchorUpdate {
        reported_tokens: reported,
        fixed_tokens: fixed,
        history_tokens: history,
        first_seq,
        last_seq: assistant_seq - 1,
        view_epoch: session.view_epoch,
        delta_ratio,
        error,
    }
}

fn output_reserve(policy: &Policy, requested: Option<i64>) -> Result<i64> {
    let Some(reserve) = requested else {
        return Ok(policy.max_output_tokens);
    };
    if reserve <= 0 || reserve >= policy.limit_tokens() {
        return Err(Error::invalid(
            "max_output_tokens",
            format!(
                "must be positive and below the session's limit of {} tokens, got {reserve}",
                policy.limit_tokens()
            ),
        ));
    }
    Ok(reserve)
}

fn does_not_fit(policy: &Policy, reserve: i64, system: i64, tools: i64, newest_turn: i64) -> Error {
    let available = policy.limit_tokens() - reserve;
    Error::FailedPrecondition {
        message: format!(
            "the request cannot fit: system prompt {system} + tools {tools} + newest turn \
             {newest_turn} tokens exceed the {available} available \
             (window {} - output reserve {reserve}); shorten the system prompt or tools, \
             lower max_output_tokens, or use a larger window",
            policy.context_window_tokens
        ),
        figures: vec![
            ("system_tokens", system),
            ("tool_tokens", tools),
            ("newest_turn_tokens", newest_turn),
            ("output_reserve_tokens", reserve),
            ("available_tokens", available),
            ("context_window_tokens", policy.context_window_tokens),
        ],
    }
}

/// Counts each message; large batches go to the blocking pool.
async fn count_messages(counter: Counter, messages: &[Message]) -> Result<Vec<i64>> {
    let bytes: usize = messages.iter().map(Message::counted_bytes).sum();
    if bytes <= INLINE_TOKENIZE_BYTES {
        return Ok(messages.iter().map(|m| counter.message(m)).collect());
    }
    let owned = messages.to_vec();
    tokio::task::spawn_blocking(move || owned.iter().map(|m| counter.message(m)).collect())
        .await
        .map_err(Error::internal)
}

/// The estimate of a request carrying the whole view with `fixed` tokens around it.
fn view_estimate(row: &SessionRow, view: &[StoredMessage], fixed: i64) -> Estimate {
    let history: i64 = view.iter().map(|m| m.view_tokens).sum();
    budget::estimate(
        anchor_of(row).as_ref(),
        row.view_epoch,
        view.first().map_or(0, |m| m.seq),
        view.last().map_or(0, |m| m.seq),
        fixed,
        history,
    )
}

/// Tool name of every call in `messages`, by call id.
fn tool_names<'a>(
    messages: impl IntoIterator<Item = &'a StoredMessage>,
) -> HashMap<String, String> {
    messages
        .into_iter()
        .flat_map(|m| &m.message.tool_calls)
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect()
}

/// Plans clearing on a view: which tool results to turn into placeholders to shed
/// `to_shed` tokens, with each placeholder's token count.
fn plan_clearing(
    policy: &Policy,
    view: &[StoredMessage],
    to_shed: i64,
    min_savings: i64,
) -> ClearingPlan {
    if to_shed <= 0 {
        return ClearingPlan::default();
    }
    let render = compaction::Render::new(policy);
    let names = tool_names(view);
    let placeholder_tokens = |message: &StoredMessage| {
        let name = names
            .get(&message.message.tool_call_id)
            .map_or("unknown", String::as_str);
        render.counter.message(&render.message(
            &message.message,
            ViewState::Cleared,
            message.seq,
            message.token_count,
            name,
        ))
    };
    let items: Vec<compaction::ViewItem> = view
        .iter()
        .map(|m| compaction::ViewItem {
            role: m.message.role,
            view_state: m.view_state,
            pinned: m.message.pinned,
            view_tokens: m.view_tokens,
            cleared_tokens: if m.message.role == Role::Tool && m.view_state != ViewState::Cleared {
                placeholder_tokens(m)
            } else {
                m.view_tokens
            },
        })
        .collect();
    let plan = compaction::plan_clearing(
        &items,
        compaction::protected_tool_tokens(policy),
        to_shed,
        min_savings,
    );
    ClearingPlan {
        cleared: plan
            .indices
            .iter()
            .map(|&i| (view[i].seq, items[i].cleared_tokens))
            .collect(),
        saved: plan.tokens_saved,
    }
}

/// Marks the cleared messages of a view read before the clearing.
fn apply_to_view(view: &mut [StoredMessage], cleared: &Cleared) {
    let tokens: HashMap<i64, i64> = cleared.cleared.iter().copied().collect();
    for message in view {
        if let Some(&placeholder) = tokens.get(&message.seq) {
            message.view_state = ViewState::Cleared;
            message.view_tokens = placeholder;
        }
    }
}

/// How each new message enters the view: tool results over the eviction size (and not
/// pinned) as their preview, with the preview's token count; the rest whole.
async fn evictions(
    policy: &Policy,
    messages: &[Message],
    counts: &[i64],
    message_count: i64,
) -> Result<Vec<(ViewState, i64)>> {
    let threshold = compaction::eviction_threshold(policy);
    let evict: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].role == Role::Tool && !messages[i].pinned && counts[i] > threshold)
        .collect();
    let mut views: Vec<(ViewState, i64)> = counts
        .iter()
        .map(|&tokens| (ViewState::Full, tokens))
        .collect();
    if evict.is_empty() {
        return Ok(views);
    }
    let render = compaction::Render::new(policy);
    let previews: Vec<(usize, Message, i64)> = evict
        .into_iter()
        .map(|i| (i, messages[i].clone(), counts[i]))
        .collect();
    let counted = tokio::task::spawn_blocking(move || {
        previews
            .into_iter()
            .map(|(i, message, tokens)| {
                let seq = message_count + 1 + i as i64;
                let preview = render.message(&message, ViewState::Evicted, seq, tokens, "");
                (i, render.counter.message(&preview))
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(Error::internal)?;
    for (i, tokens) in counted {
        views[i] = (ViewState::Evicted, tokens.min(counts[i]));
    }
    Ok(views)
}

/// Checks an Expand target and returns its seqs when it is a list (sorted, deduplicated).
fn validate_expand_target(target: &ExpandTarget) -> Result<Vec<i64>> {
    match target {
        ExpandTarget::Range {
            first_seq,
            last_seq,
        } => {
            if *first_seq < 1 {
                return Err(Error::invalid(
                    "range.first_seq",
                    format!("must be at least 1, got {first_seq}"),
                ));
            }
            if last_seq < first_seq {
                return Err(Error::invalid(
                    "range.last_seq",
                    format!("must be at least first_seq ({first_seq}), got {last_seq}"),
                ));
            }
            Ok(Vec::new())
        }
        ExpandTarget::List(seqs) => {
            if seqs.is_empty() {
                return Err(Error::invalid("list.seqs", "must name at least one seq"));
            }
            if seqs.len() > MAX_EXPAND_SEQS {
                return Err(Error::invalid(
                    "list.seqs",
                    format!(
                        "may name at most {MAX_EXPAND_SEQS} seqs, got {}",
                        seqs.len()
                    ),
                ));
            }
            if let Some(bad) = seqs.iter().find(|&&seq| seq < 1) {
                return Err(Error::invalid(
                    "list.seqs",
                    format!("seqs start at 1, got {bad}"),
                ));
            }
            let mut sorted = seqs.clone();
            sorted.sort_unstable();
            sorted.dedup();
            Ok(sorted)
        }
        // Resolved to its range before validation.
        ExpandTarget::Summary(_) => Ok(Vec::new()),
    }
}

/// How many of `messages`, in order, fit in `max_tokens` (0: all); at least one.
fn within_cap(messages: &[StoredMessage], max_tokens: i64) -> usize {
    if max_tokens == 0 {
        return messages.len();
    }
    let mut total = 0;
    let fitting = messages
        .iter()
        .take_while(|m| {
            total += m.token_count;
            total <= max_tokens
        })
        .count();
    fitting.max(1).min(messages.len())
}
