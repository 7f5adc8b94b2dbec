//! Metrics: every instrument ctxd records, defined here once, through the OpenTelemetry
//! metrics SDK. `provider.rs` builds the SDK's meter provider (OTLP export when
//! OTEL_EXPORTER_OTLP_ENDPOINT is set, a pull reader when `--metrics-listen` is set),
//! `exposition.rs` renders what the pull reader collects in Prometheus' text format and
//! `ops_http.rs` (beside this folder) serves it on `GET /metrics`.
//!
//! The instruments are process-wide, like OpenTelemetry's own global meter provider:
//! the places that know a figure (the gRPC edge, the engine, the store, the job
//! workers, the event streams) record it through [`metrics()`] without a handle passed
//! down every layer. Until [`install`] runs (tests that start a server in-process, the
//! offline subcommands) they are no-ops. Attribute sets on the hot paths (BuildMessages,
//! AppendTurn) are built once, here, or are arrays of static strings on the stack: no
//! allocation per recording.
mod exposition;
mod provider;
mod sampled;

use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider as _, ObservableGauge};

pub use exposition::CONTENT_TYPE;
pub use exposition::render;
pub use provider::{MetricsPipeline, MetricsSetupError, PrometheusReader};
pub use sampled::{JobQueueSample, PoolFigures, PoolSample};

use sampled::Sampled;

/// The instrumentation scope every ctxd instrument belongs to.
pub const SCOPE: &str = "ctxd";

/// `rpc.service` of every RPC ctxd serves.
const RPC_SERVICE: &str = "ctxd.v1.ContextService";

/// Bucket boundaries for durations in seconds: 1 ms to 60 s.
const SECONDS_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0,
];

/// Bucket boundaries for token counts: 64 tokens to 1 M.
const TOKEN_BUCKETS: [f64; 15] = [
    64.0,
    256.0,
    1_000.0,
    2_000.0,
    4_000.0,
    8_000.0,
    16_000.0,
    32_000.0,
    64_000.0,
    100_000.0,
    128_000.0,
    200_000.0,
    400_000.0,
    1_000_000.0,
    2_000_000.0,
];

/// Bucket boundaries for the appends one batch statement writes (at most 64).
const BATCH_BUCKETS: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Bucket boundaries for a fraction of the context window.
const RATIO_BUCKETS: [f64; 12] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 1.0];

/// Event kinds by their proto number (0: one this build does not know).
const EVENT_KINDS: [&str; 12] = [
    "unknown",
    "compaction_started",
    "compaction_completed",
    "compaction_failed",
    "tool_results_cleared",
    "output_evicted",
    "budget_threshold_crossed",
    "session_deleted",
    "compaction_reverted",
    "session_finished",
    "session_forked",
    "recall_answered",
];

/// The regions of a built request, in the order of [`Regions`] attributes.
#[derive(Debug, Clone, Copy)]
pub struct BuildFigures {
    pub system_tokens: i64,
    pub tool_tokens: i64,
    pub summary_tokens: i64,
    pub history_tokens: i64,
    /// The request's estimated input tokens.
    pub estimate_tokens: i64,
    /// The session's context window.
    pub window_tokens: i64,
}

/// How a build relates to the session's previous one (prompt-cache stability).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildKind {
    /// Same start, same view, same system prompt and tools: the provider's prompt cache
    /// holds its prefix.
    Extends = 0,
    /// Anything else that changed the request's start.
    Restarts = 1,
    /// The very same request as the previous build.
    Repeats = 2,
}

/// What the session view cache had for a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewLookup {
    /// The whole view.
    Hit = 0,
    /// The view up to some recent appends, which were read from the table.
    Partial = 1,
    /// Nothing: the whole view was read.
    Miss = 2,
}

/// Which kind of compaction changed a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionMetric {
    /// Old tool results cleared to placeholders.
    Clearing,
    /// A summarization pass (leaf summary, step summary and the condensations it made).
    Summarize,
    /// A job's last attempt: deterministic truncation instead of the model.
    Fallback,
    /// An emergency compaction (Compact EMERGENCY).
    Emergency,
}

impl CompactionMetric {
    fn as_str(self) -> &'static str {
        match self {
            CompactionMetric::Clearing => "clearing",
            CompactionMetric::Summarize => "summarize",
            CompactionMetric::Fallback => "fallback",
            CompactionMetric::Emergency => "emergency",
        }
    }
}

/// Every instrument ctxd records, with the attribute sets its hot paths reuse.
pub struct Metrics {
    rpc_duration: Histogram<f64>,
    proxy_duration: Histogram<f64>,
    build_tokens: Histogram<u64>,
    build_window: Histogram<f64>,
    builds: Counter<u64>,
    compactions: Counter<u64>,
    compaction_tokens: Counter<u64>,
    compaction_messages: Counter<u64>,
    model_duration: Histogram<f64>,
    model_tokens: Histogram<u64>,
    summarizer_calls: Counter<u64>,
    job_attempts: Counter<u64>,
    job_ends: Counter<u64>,
    job_rescues: Counter<u64>,
    sessions_expired: Counter<u64>,
    events_written: Counter<u64>,
    event_deliveries: Counter<u64>,
    event_lag: Histogram<f64>,
    view_cache_lookups: Counter<u64>,
    quota_rejections: Counter<u64>,
    recall_rounds: Counter<u64>,
    append_batch_size: Histogram<u64>,
    append_batch_duration: Histogram<f64>,
    /// Region attribute sets: system, tools, summaries, history.
    regions: [[KeyValue; 1]; 4],
    /// Build kind attribute sets, by [`BuildKind`].
    build_kinds: [[KeyValue; 1]; 3],
    /// Event kind attribute sets, by EventKind number.
    event_kinds: [[KeyValue; 1]; EVENT_KINDS.len()],
    /// View cache lookup results, by [`ViewLookup`].
    lookups: [[KeyValue; 1]; 3],
    /// What the observable gauges read.
    sampled: Arc<Sampled>,
    /// Observable gauges live as long as their registration.
    _gauges: Vec<ObservableGauge<i64>>,
    _float_gauges: Vec<ObservableGauge<f64>>,
}

static INSTALLED: OnceLock<Metrics> = OnceLock::new();

static DISABLED: LazyLock<Metrics> = LazyLock::new(|| {
    Metrics::new(&opentelemetry::metrics::noop::NoopMeterProvider::new().meter(SCOPE))
});

/// The process's instruments: the installed ones, or no-ops before [`install`].
pub fn metrics() -> &'static Metrics {
    INSTALLED.get().unwrap_or(&DISABLED)
}

/// Creates the instruments on `meter` and makes them the process's; a second call keeps
/// the first ones (and returns false).
pub fn install(meter: &Meter) -> bool {
    let mut installed = false;
    INSTALLED.get_or_init(|| {
        installed = true;
        Metrics::new(meter)
    });
    installed
}

/// An instrument's name, unit and description (what a scrape shows of it).
struct Spec {
    name: &'static str,
    unit: &'static str,
    description: &'static str,
}

const RPC_DURATION: Spec = Spec {
    name: "rpc.server.duration",
    unit: "s",
    description: "Duration of RPCs served, by method and gRPC status code",
};

const PROXY_DURATION: Spec = Spec {
    name: "http.server.request.duration",
    unit: "s",
    description: "Duration of the provider endpoint's requests until the response head (a stream goes on after), by route and status",
};

const BUILD_TOKENS: Spec = Spec {
    name: "ctxd.build.tokens",
    unit: "{token}",
    description: "Tokens per built request, by region (system, tools, summaries, history)",
};

const BUILD_WINDOW: Spec = Spec {
    name: "ctxd.build.window.utilization",
    unit: "1",
    description: "Estimated input tokens of a built request over the session's context window",
};

const BUILDS: Spec = Spec {
    name: "ctxd.builds",
    unit: "{build}",
    description: "Built requests, by whether each extends the session's previous one (its prompt-cache prefix holds), restarts it or repeats it",
};

const COMPACTIONS: Spec = Spec {
    name: "ctxd.compactions",
    unit: "{compaction}",
    description: "Committed compactions, by kind and summary level",
};

const COMPACTION_TOKENS: Spec = Spec {
    name: "ctxd.compaction.tokens_removed",
    unit: "{token}",
    description: "Tokens compactions removed from the sessions' requests, by kind and level",
};

const COMPACTION_MESSAGES: Spec = Spec {
    name: "ctxd.compaction.messages_removed",
    unit: "{message}",
    description: "Messages compactions took out of the sessions' requests (summarized), or cleared to placeholders, by kind and level",
};

const MODEL_DURATION: Spec = Spec {
    name: "gen_ai.client.operation.duration",
    unit: "s",
    description: "Duration of summarizer model calls (each HTTP request, retries included)",
};

const MODEL_TOKENS: Spec = Spec {
    name: "gen_ai.client.token.usage",
    unit: "{token}",
    description: "Tokens summarizer model calls used, as the model reported them, by token type",
};

const SUMMARIZER_CALLS: Spec = Spec {
    name: "ctxd.summarizer.calls",
    unit: "{call}",
    description: "Summarizer model calls, by outcome (ok, error) and provider",
};

const JOB_ATTEMPTS: Spec = Spec {
    name: "ctxd.job.attempts",
    unit: "{attempt}",
    description: "Job attempts this replica's workers started",
};

const JOB_ENDS: Spec = Spec {
    name: "ctxd.job.ends",
    unit: "{attempt}",
    description: "Job attempts this replica's workers ended, by the state they left the job in",
};

const JOB_RESCUES: Spec = Spec {
    name: "ctxd.job.rescues",
    unit: "{job}",
    description: "Jobs rescued after their worker's lease lapsed",
};

const SESSIONS_EXPIRED: Spec = Spec {
    name: "ctxd.sessions.expired",
    unit: "{session}",
    description: "Sessions the retention sweep deleted, past their policy's retention",
};

const EVENTS_WRITTEN: Spec = Spec {
    name: "ctxd.events.written",
    unit: "{event}",
    description: "Events committed, by kind",
};

const EVENT_DELIVERIES: Spec = Spec {
    name: "ctxd.events.deliveries",
    unit: "{event}",
    description: "Events sent to SubscribeEvents streams",
};

const EVENT_LAG: Spec = Spec {
    name: "ctxd.events.subscriber.lag",
    unit: "s",
    description: "Time from an event's commit to its delivery to a subscriber",
};

const VIEW_CACHE_LOOKUPS: Spec = Spec {
    name: "ctxd.view_cache.lookups",
    unit: "{lookup}",
    description: "Session view cache lookups, by result: hit (the whole view cached), partial (only messages appended since read) or miss",
};

const QUOTA_REJECTIONS: Spec = Spec {
    name: "ctxd.quota.rejections",
    unit: "{request}",
    description: "Requests rejected with RESOURCE_EXHAUSTED, by the limit they hit",
};

const RECALL_ROUNDS: Spec = Spec {
    name: "ctxd.proxy.recall_rounds",
    unit: "{round}",
    description: "Model replies the provider endpoint answered itself (recall rounds), by outcome: answered, or limit (the request's rounds were used up: the next call went without the recall tools)",
};

const APPEND_BATCH_SIZE: Spec = Spec {
    name: "ctxd.append.batch.size",
    unit: "{append}",
    description: "Appends written by one batch statement of this replica's AppendTurn writer",
};

const APPEND_BATCH_DURATION: Spec = Spec {
    name: "ctxd.append.batch.duration",
    unit: "s",
    description: "A batch statement's round trip from the writer's side: taking a connection when it keeps none, the statement and its commit, the rows back",
};

fn counter(meter: &Meter, spec: &Spec) -> Counter<u64> {
    meter
        .u64_counter(spec.name)
        .with_unit(spec.unit)
        .with_description(spec.description)
        .build()
}

fn f64_histogram(meter: &Meter, spec: &Spec, buckets: &[f64]) -> Histogram<f64> {
    meter
        .f64_histogram(spec.name)
        .with_unit(spec.unit)
        .with_description(spec.description)
        .with_boundaries(buckets.to_vec())
        .build()
}

fn u64_histogram(meter: &Meter, spec: &Spec, buckets: &[f64]) -> Histogram<u64> {
    meter
        .u64_histogram(spec.name)
        .with_unit(spec.unit)
        .with_description(spec.description)
        .with_boundaries(buckets.to_vec())
        .build()
}

impl Metrics {
    /// Creates every instrument on `meter`.
    pub fn new(meter: &Meter) -> Metrics {
        let sampled = Arc::new(Sampled::default());
        let (gauges, float_gauges) = sampled::register(meter, &sampled);
        Metrics {
            rpc_duration: f64_histogram(meter, &RPC_DURATION, &SECONDS_BUCKETS),
            proxy_duration: f64_histogram(meter, &PROXY_DURATION, &SECONDS_BUCKETS),
            build_tokens: u64_histogram(meter, &BUILD_TOKENS, &TOKEN_BUCKETS),
            build_window: f64_histogram(meter, &BUILD_WINDOW, &RATIO_BUCKETS),
            builds: counter(meter, &BUILDS),
            compactions: counter(meter, &COMPACTIONS),
            compaction_tokens: counter(meter, &COMPACTION_TOKENS),
            compaction_messages: counter(meter, &COMPACTION_MESSAGES),
            model_duration: f64_histogram(meter, &MODEL_DURATION, &SECONDS_BUCKETS),
            model_tokens: u64_histogram(meter, &MODEL_TOKENS, &TOKEN_BUCKETS),
            summarizer_calls: counter(meter, &SUMMARIZER_CALLS),
            job_attempts: counter(meter, &JOB_ATTEMPTS),
            job_ends: counter(meter, &JOB_ENDS),
            job_rescues: counter(meter, &JOB_RESCUES),
            sessions_expired: counter(meter, &SESSIONS_EXPIRED),
            events_written: counter(meter, &EVENTS_WRITTEN),
            event_deliveries: counter(meter, &EVENT_DELIVERIES),
            event_lag: f64_histogram(meter, &EVENT_LAG, &SECONDS_BUCKETS),
            view_cache_lookups: counter(meter, &VIEW_CACHE_LOOKUPS),
            quota_rejections: counter(meter, &QUOTA_REJECTIONS),
            recall_rounds: counter(meter, &RECALL_ROUNDS),
            append_batch_size: u64_histogram(meter, &APPEND_BATCH_SIZE, &BATCH_BUCKETS),
            append_batch_duration: f64_histogram(meter, &APPEND_BATCH_DURATION, &SECONDS_BUCKETS),
            regions: ["system", "tools", "summaries", "history"]
                .map(|region| [KeyValue::new("ctxd.build.region", region)]),
            build_kinds: ["extends", "restarts", "repeats"]
                .map(|kind| [KeyValue::new("ctxd.build.kind", kind)]),
            event_kinds: EVENT_KINDS.map(|kind| [KeyValue::new("ctxd.event.kind", kind)]),
            lookups: ["hit", "partial", "miss"]
                .map(|result| [KeyValue::new("ctxd.view_cache.result", result)]),
            sampled,
            _gauges: gauges,
            _float_gauges: float_gauges,
        }
    }

    /// An RPC ended with `code` after `elapsed`.
    pub fn rpc_finished(&self, method: &'static str, code: tonic::Code, elapsed: Duration) {
        self.rpc_duration.record(
            elapsed.as_secs_f64(),
            &[
                KeyValue::new("rpc.system", "grpc"),
                KeyValue::new("rpc.service", RPC_SERVICE),
                KeyValue::new("rpc.method", method),
                KeyValue::new("rpc.grpc.status_code", code as i64),
            ],
        );
    }

    /// A request to the provider endpoint was answered (`route`: its path's template).
    pub fn proxy_answered(&self, route: &'static str, status: u16, elapsed: Duration) {
        self.proxy_duration.record(
            elapsed.as_secs_f64(),
            &[
                KeyValue::new("http.request.method", "POST"),
                KeyValue::new("http.route", route),
                KeyValue::new("http.response.status_code", i64::from(status)),
            ],
        );
    }

    /// A BuildMessages produced a request.
    pub fn build_finished(&self, figures: &BuildFigures, kind: BuildKind) {
        let [system, tools, summaries, history] = &self.regions;
        for (tokens, attributes) in [
            (figures.system_tokens, system),
            (figures.tool_tokens, tools),
            (figures.summary_tokens, summaries),
            (figures.history_tokens, history),
        ] {
            self.build_tokens.record(tokens.max(0) as u64, attributes);
        }
        if figures.window_tokens > 0 {
            let used = figures.estimate_tokens.max(0) as f64 / figures.window_tokens as f64;
            self.build_window.record(used, &[]);
        }
        self.builds.add(1, &self.build_kinds[kind as usize]);
    }

    /// A compaction committed, removing `tokens` and `messages` from the request.
    pub fn compaction_committed(
        &self,
        kind: CompactionMetric,
        level: i64,
        tokens: i64,
        messages: i64,
    ) {
        let attributes = [
            KeyValue::new("ctxd.compaction.kind", kind.as_str()),
            KeyValue::new("ctxd.compaction.level", level),
        ];
        self.compactions.add(1, &attributes);
        self.compaction_tokens
            .add(tokens.max(0) as u64, &attributes);
        self.compaction_messages
            .add(messages.max(0) as u64, &attributes);
    }

    /// A summarizer model call (one HTTP request) ended; `attributes` name the provider
    /// and model (built once per summarizer profile); `error` is the error type.
    pub fn model_call(
        &self,
        attributes: &ModelAttributes,
        elapsed: Duration,
        error: Option<&'static str>,
        usage: Option<(u64, u64)>,
    ) {
        match error {
            None => {
                self.model_duration
                    .record(elapsed.as_secs_f64(), &attributes.base);
                self.summarizer_calls.add(1, &attributes.ok);
            }
            Some(error) => {
                let mut failed = attributes.base.clone();
                failed.push(KeyValue::new("error.type", error));
                self.model_duration.record(elapsed.as_secs_f64(), &failed);
                self.summarizer_calls.add(1, &attributes.failed);
            }
        }
        if let Some((input, output)) = usage {
            self.model_tokens.record(input, &attributes.input);
            self.model_tokens.record(output, &attributes.output);
        }
    }

    /// A worker started a job attempt.
    pub fn job_started(&self) {
        self.job_attempts.add(1, &[]);
    }

    /// A worker ended a job attempt, leaving the job in `state`.
    pub fn job_ended(&self, state: &'static str) {
        self.job_ends
            .add(1, &[KeyValue::new("ctxd.job.state", state)]);
    }

    /// The maintenance sweep rescued `count` jobs.
    pub fn jobs_rescued(&self, count: u64) {
        self.job_rescues.add(count, &[]);
    }

    /// The retention sweep deleted a session past its retention.
    pub fn session_expired(&self) {
        self.sessions_expired.add(1, &[]);
    }

    /// An event committed; `kind`: its EventKind number (1-8, as the proto numbers
    /// them).
    pub fn event_written(&self, kind: i16) {
        let at = usize::try_from(kind)
            .ok()
            .filter(|&at| at < EVENT_KINDS.len())
            .unwrap_or(0);
        self.events_written.add(1, &self.event_kinds[at]);
    }

    /// An event reached a subscriber `lag` after its commit.
    pub fn event_delivered(&self, lag: Duration) {
        self.event_deliveries.add(1, &[]);
        self.event_lag.record(lag.as_secs_f64(), &[]);
    }

    /// A session view cache lookup (only while the cache is on).
    pub fn view_cache_lookup(&self, lookup: ViewLookup) {
        self.view_cache_lookups
            .add(1, &self.lookups[lookup as usize]);
    }

    /// A request was rejected for exceeding `limit` (RESOURCE_EXHAUSTED).
    pub fn quota_rejected(&self, limit: &'static str) {
        self.quota_rejections
            .add(1, &[KeyValue::new("ctxd.quota.limit", limit)]);
    }

    /// The provider endpoint ran a recall round (`answered`) or, its rounds used up, called
    /// the upstream without the recall tools (`limit`).
    pub fn recall_round(&self, outcome: &'static str) {
        self.recall_rounds
            .add(1, &[KeyValue::new("ctxd.recall.outcome", outcome)]);
    }

    /// The AppendTurn writer wrote a batch of `appends` in `elapsed` (whatever its
    /// outcome).
    pub fn append_batch_written(&self, appends: usize, elapsed: Duration) {
        self.append_batch_size.record(appends as u64, &[]);
        self.append_batch_duration
            .record(elapsed.as_secs_f64(), &[]);
    }

    /// The latest reading of the jobs table, for the queue gauges.
    pub fn set_job_queue(&self, sample: JobQueueSample) {
        self.sampled.set_job_queue(sample);
    }

    /// Where the pool and view cache gauges read from (the store, once it is
    /// connected); the first source set stays.
    pub fn observe_pool(&self, source: impl Fn() -> PoolSample + Send + Sync + 'static) {
        self.sampled.observe_pool(Box::new(source));
    }
}

/// A summarizer profile's attribute sets, built once when the profile is loaded.
#[derive(Debug, Clone)]
pub struct ModelAttributes {
    base: Vec<KeyValue>,
    ok: [KeyValue; 2],
    failed: [KeyValue; 2],
    input: Vec<KeyValue>,
    output: Vec<KeyValue>,
}

impl ModelAttributes {
    /// `provider`: openai or anthropic (`gen_ai.provider.name`); `model`: the requested
    /// model.
    pub fn new(provider: &'static str, model: &str) -> ModelAttributes {
        let base = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("gen_ai.request.model", model.to_string()),
        ];
        let with = |key: &'static str, value: &'static str| {
            let mut attributes = base.clone();
            attributes.push(KeyValue::new(key, value));
            attributes
        };
        ModelAttributes {
            ok: [
                KeyValue::new("gen_ai.provider.name", provider),
                KeyValue::new("ctxd.outcome", "ok"),
            ],
            failed: [
                KeyValue::new("gen_ai.provider.name", provider),
                KeyValue::new("ctxd.outcome", "error"),
            ],
            input: with("gen_ai.token.type", "input"),
            output: with("gen_ai.token.type", "output"),
            base,
        }
    }
}
