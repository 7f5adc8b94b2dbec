//! The engine: what each operation does, in domain terms. It validates input, calls the
//! pure core (tokenize, turns, budget) and the store. The API layer only converts
//! between the wire and these types.
//!
//! One file per operation group, each an `impl Engine` block with the helpers only it
//! uses: `sessions` (create, get, view, delete, a session's place in its tree),
//! `finish` (FinishSession: a subagent's end, its answer appended to its parent),
//! `append`, `build` (BuildMessages and CheckBudget), `compact`, `revert`
//! (RevertCompaction), `expand`, `summary_jobs` (enqueueing and running summarization
//! jobs), and the compaction passes they share, `clearing` and `summary_pass`; `ledger`
//! (UpdateLedger and the task ledger's block). `request` counts what a request carries; `report` holds the budget
//! helpers over a session row. The public request and response types live here.
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::budget::Report;
use crate::error::{Error, Result, quoted};
use crate::events::EventsConfig;
use crate::job::Job;
use crate::limits::Limits;
pub use crate::message::Usage;
use crate::message::{Message, StoredMessage};
use crate::policy::Policy;
use crate::quota::Quotas;
use crate::quotas::QuotaGate;
use crate::session::{Session, Summary};
use crate::store::{NotifyGate, Store};
use crate::summarizer::model::ModelSummarizer;
use crate::tokenize::{TextCounts, ToolDefinition};
pub use crate::validate::validate_session_id;
pub use export::Imported;
pub use finish::{FinishOutcome, FinishRequest, SUBAGENT_SESSION_KEY};
pub use fork::ForkRequest;
pub use ledger::{LedgerUpdate, LedgerUpdated};
pub use listing::{ListRequest, Listing};
pub use revert::{RevertRequest, RevertTarget, Reverted};
pub use search::{Scope, SearchRequest};
pub use sent::Sent;
pub use sessions::SessionView;
pub use subscribe::SubscribeRequest;

mod append;
mod build;
mod build_work;
mod clearing;
mod compact;
mod expand;
mod export;
mod finish;
mod fork;
mod ladder;
mod ledger;
mod listing;
mod recall;
mod report;
mod request;
mod revert;
mod search;
mod sent;
mod sessions;
mod subscribe;
mod summary_commit;
mod summary_jobs;
mod summary_pass;

/// Text of system prompts and tool definitions whose token counts a replica remembers
/// (an agent sends the same ones with every call; a few hundred distinct sets fit).
const REQUEST_TEXT_MEMO_BYTES: usize = 16 * 1024 * 1024;

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
    /// Every tenant's quotas unless it has its own.
    pub quotas: Quotas,
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
            quotas: Quotas::default(),
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
    /// The tenants' quotas in this replica.
    quotas: Arc<QuotaGate>,
}

/// A session as an operation answers it (its policy is the row's).
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub row: Session,
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
    /// The batch is ctxd's answer to a recall call (one tool result), announced.
    pub recall: Option<crate::recall::Answered>,
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
    pub recipient: Recipient,
}

/// Who reads a build's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipient {
    /// The client itself (the NEUTRAL format): every message of the view, a step whose
    /// tools are still running included.
    Client,
    /// A provider, which takes no request ending with an unanswered call: the messages
    /// end before a step the client is still running the tools of.
    Provider,
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

/// A built request, decided whole: the front doors (gRPC, the provider endpoint) only
/// convert and render it.
#[derive(Debug, Clone)]
pub struct Built {
    /// The messages to send, in order, the summaries' message among them when it is not
    /// in the system prompt.
    pub messages: Sent,
    /// The system prompt to send: the request's, with the summaries appended when they
    /// are placed there.
    pub system_prompt: String,
    /// The summaries' block (with the task ledger's), when the build put it in the system
    /// prompt: a front door that keeps the client's own system prompt adds this.
    pub system_block: Option<String>,
    /// The active summaries in the view, oldest first.
    pub summaries: Vec<Summary>,
    pub report: Report,
    pub version: i64,
    pub trimmed: Trimmed,
    pub tool_definitions: Vec<ToolDefinition>,
    /// Where the summaries' block is (in the system prompt or as a message): the
    /// prompt-cache breakpoints of a provider body that needs them.
    pub stable: crate::render::Stable,
    /// The seqs of the first and the last stored message sent (0 when none).
    pub first_seq: i64,
    pub last_seq: i64,
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
    pub job: Option<Job>,
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
            quotas: Arc::new(QuotaGate::new(store.clone(), config.quotas)),
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

    /// The server's size limits.
    pub fn limits(&self) -> Limits {
        self.config.limits
    }

    /// The tenants' quotas (the API layer admits each RPC there).
    pub fn quotas(&self) -> &QuotaGate {
        &self.quotas
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
}
