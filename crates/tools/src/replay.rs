//! `ctxd replay FILE…`: drives recorded sessions (an OpenAI chat history as JSON, gzip
//! or not, with the provider's usage under `extra.response.usage` as mini-swe-agent
//! records it) through a running server as an agent would — BuildMessages before each
//! assistant message, AppendTurn after — and reports, per session, what compaction did
//! and whether every promise held.
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::with_key;
use ctxd_server::pb;
use ctxd_server::pb::context_service_client::ContextServiceClient;
use ctxd_server::policy::TokenizerKind;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A recorded session: its system prompt, and each message with the provider's prompt
/// tokens for the call that produced it (assistant messages).
pub struct Recorded {
    pub system: String,
    pub messages: Vec<(pb::Message, Option<i64>)>,
}

/// `tool_calls` is a JSON list, or in some recordings a Python-repr string of one.
fn tool_calls(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(list) => list.clone(),
        Value::String(text) => {
            let json = text
                .replace('\'', "\"")
                .replace("None", "null")
                .replace("True", "true")
                .replace("False", "false");
            serde_json::from_str(&json).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

pub fn load(path: &Path) -> Result<Recorded, String> {
    let fail =
        |what: &str, error: &dyn std::fmt::Display| format!("{}: {what}: {error}", path.display());
    let file = std::fs::File::open(path).map_err(|e| fail("cannot open", &e))?;
    let mut text = String::new();
    if path.extension().is_some_and(|ext| ext == "gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text)
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text)
    }
    .map_err(|e| fail("cannot read", &e))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| fail("not JSON", &e))?;
    let list = doc["messages"]
        .as_array()
        .ok_or_else(|| fail("no \"messages\" list", &"expected an OpenAI chat history"))?;
    let mut system = String::new();
    let mut messages = Vec::new();
    for message in list {
        let content = message["content"].as_str().unwrap_or_default().to_string();
        match message["role"].as_str().unwrap_or_default() {
            "system" => system = content,
            "user" => messages.push((message_of(pb::Role::User, content), None)),
            "tool" => messages.push((
                pb::Message {
                    tool_call_id: message["tool_call_id"].as_str().unwrap_or_default().into(),
                    ..message_of(pb::Role::Tool, content)
                },
                None,
            )),
            "assistant" => {
                let calls = tool_calls(&message["tool_calls"])
                    .into_iter()
                    .map(|call| pb::ToolCall {
                        id: call["id"].as_str().unwrap_or_default().into(),
                        name: call["function"]["name"].as_str().unwrap_or_default().into(),
                        arguments_json: call["function"]["arguments"]
                            .as_str()
                            .unwrap_or_default()
                            .into(),
                    })
                    .collect();
                let usage = message["extra"]["response"]["usage"]["prompt_tokens"].as_i64();
                messages.push((
                    pb::Message {
                        role: pb::Role::Assistant as i32,
                        content,
                        tool_calls: calls,
                        ..Default::default()
                    },
                    usage,
                ));
            }
            _ => {}
        }
    }
    Ok(Recorded { system, messages })
}

fn message_of(role: pb::Role, content: String) -> pb::Message {
    pb::Message {
        role: role as i32,
        content,
        ..Default::default()
    }
}

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: String,
    /// TLS to the server (plaintext without a CA).
    pub tls: crate::client::ClientTls,
    pub api_key: Option<String>,
    /// The sessions' context window; the output reserve follows the 4:1 rule.
    pub window: i64,
    /// Report the recorded usage with each assistant message. Only meaningful when the
    /// window holds the whole recorded conversation (the usage counts that request).
    pub report_usage: bool,
    /// The sessions' tokenizer (`None`: the server's default).
    pub tokenizer: Option<TokenizerKind>,
    /// Show progress on standard error.
    pub progress: bool,
    /// Keep the sessions the replay created; by default each is deleted once replayed.
    pub keep: bool,
}

/// What one replayed session did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub name: String,
    pub session_id: String,
    pub messages: usize,
    pub builds: usize,
    pub peak_tokens: i64,
    pub final_tokens: i64,
    pub over_budget: usize,
    pub orphans: usize,
    /// Builds whose request starts with the previous request (system prompt included).
    pub extending: usize,
    /// |estimate - recorded prompt tokens| / recorded, in percent, per build that had
    /// nothing compacted away (comparable with what the provider counted).
    pub errors_pct: Vec<f64>,
    pub latencies: Vec<Duration>,
    pub stats: pb::CompactionStats,
}

impl Outcome {
    pub fn cache_stable_pct(&self) -> f64 {
        if self.builds > 1 {
            self.extending as f64 * 100.0 / (self.builds - 1) as f64
        } else {
            100.0
        }
    }
}

/// Tool results that answer no open call of the step before them, and calls left
/// unanswered before the next non-result message (the last step may stay open).
pub fn orphans(messages: &[pb::Message]) -> usize {
    let mut open = std::collections::HashSet::new();
    let mut orphans = 0;
    for message in messages {
        if message.role == pb::Role::Tool as i32 {
            orphans += usize::from(!open.remove(&message.tool_call_id));
            continue;
        }
        orphans += open.len();
        open.clear();
        open.extend(message.tool_calls.iter().map(|call| call.id.clone()));
    }
    orphans
}

/// Replays `files` one after another and returns the report table.
pub async fn run(files: &[std::path::PathBuf], options: &Options) -> Result<String, BoxError> {
    let channel = crate::client::connect(
        &options.addr,
        &options.tls,
        Duration::from_secs(5),
        Duration::from_secs(60),
    )
    .await?;
    let mut client = ContextServiceClient::new(channel).max_decoding_message_size(usize::MAX);
    let mut outcomes = Vec::new();
    for (index, path) in files.iter().enumerate() {
        let recorded = load(path)?;
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().to_string())
            .unwrap_or_default();
        let name = name.split(".traj").next().unwrap_or(&name).to_string();
        let session_id = format!("replay-{}", uuid::Uuid::new_v4().simple());
        let outcome = replay_one(&mut client, options, &recorded, name, session_id, |done| {
            if options.progress {
                eprint!(
                    "\r[{}/{}] {}: {done}/{} messages   ",
                    index + 1,
                    files.len(),
                    path.display(),
                    recorded.messages.len()
                );
            }
        })
        .await?;
        if !options.keep {
            let delete = pb::DeleteSessionRequest {
                session_id: outcome.session_id.clone(),
            };
            client
                .delete_session(with_key(delete, options.api_key.as_deref())?)
                .await?;
        }
        outcomes.push(outcome);
    }
    if options.progress {
        eprintln!();
    }
    Ok(table(&outcomes, options.window) + &created(&outcomes, options.keep))
}

/// The sessions a replay created, by recorded file, and what became of them.
fn created(outcomes: &[Outcome], keep: bool) -> String {
    let fate = if keep {
        "kept"
    } else {
        "deleted (--keep keeps them)"
    };
    let mut out = format!("\nsessions created ({fate}):\n");
    for o in outcomes {
        out.push_str(&format!("{} {}\n", o.session_id, o.name));
    }
    out
}

/// Replays one recorded session into a new session `session_id`.
pub async fn replay_one(
    client: &mut ContextServiceClient<tonic::transport::Channel>,
    options: &Options,
    recorded: &Recorded,
    name: String,
    session_id: String,
    mut progress: impl FnMut(usize),
) -> Result<Outcome, BoxError> {
    let key = options.api_key.as_deref();
    let create = pb::CreateSessionRequest {
        session_id: session_id.clone(),
        policy: Some(pb::Policy {
            context_window_tokens: Some(options.window),
            tokenizer: options
                .tokenizer
                .map(|tokenizer| ctxd_server::api::tokenizer_to_pb(tokenizer) as i32),
            ..Default::default()
        }),
        ..Default::default()
    };
    client.create_session(with_key(create, key)?).await?;
    let limit = options.window - options.window / 4;
    let mut outcome = Outcome {
        name,
        session_id: session_id.clone(),
        messages: recorded.messages.len(),
        ..Default::default()
    };
    let mut previous: Option<Vec<String>> = None;
    let tools = bash_tool();
    for (done, (message, usage)) in recorded.messages.iter().enumerate() {
        let mut append = pb::AppendTurnRequest {
            session_id: session_id.clone(),
            messages: vec![message.clone()],
            ..Default::default()
        };
        if let Some(reported) = usage {
            let request = pb::BuildMessagesRequest {
                session_id: session_id.clone(),
                system_prompt: recorded.system.clone(),
                tools: Some(tools.clone()),
                format: pb::OutputFormat::Neutral as i32,
                ..Default::default()
            };
            let started = Instant::now();
            let built = client
                .build_messages(with_key(request, key)?)
                .await?
                .into_inner();
            outcome.latencies.push(started.elapsed());
            tally(&mut outcome, &built, *reported, limit, &mut previous);
            if options.report_usage {
                append.usage = Some(pb::Usage {
                    input_tokens: *reported,
                    ..Default::default()
                });
            }
        }
        let started = Instant::now();
        client.append_turn(with_key(append, key)?).await?;
        outcome.latencies.push(started.elapsed());
        progress(done + 1);
    }
    let get = pb::GetSessionRequest {
        session_id,
        include_view: false,
    };
    let session = client
        .get_session(with_key(get, key)?)
        .await?
        .into_inner()
        .session;
    outcome.stats = session.and_then(|s| s.compaction).unwrap_or_default();
    Ok(outcome)
}

/// The tool the recorded sessions' agents had (the benchmarks replay them with it too).
pub fn bash_tool() -> pb::Tools {
    pb::Tools {
        tools: Some(pb::tools::Tools::Definitions(pb::ToolDefinitionList {
            items: vec![pb::ToolDefinition {
                name: "bash".into(),
                description: "Execute a bash command and return its output".into(),
                parameters_json_schema: r#"{"type":"object","properties":{"command":{"type":"string","description":"The bash command to execute"}},"required":["command"]}"#.into(),
            }],
        })),
    }
}

/// Counts one build into `outcome`: over the limit, orphans, tokens, the estimate's
/// error against the provider's count when nothing was compacted, and whether it
/// extends the previous build (`previous`: its messages as text).
fn tally(
    outcome: &mut Outcome,
    built: &pb::BuildMessagesResponse,
    reported: i64,
    limit: i64,
    previous: &mut Option<Vec<String>>,
) {
    let breakdown = built
        .budget
        .unwrap_or_default()
        .breakdown
        .unwrap_or_default();
    outcome.builds += 1;
    outcome.over_budget += usize::from(breakdown.total_tokens > limit);
    outcome.orphans += orphans(&built.messages);
    outcome.peak_tokens = outcome.peak_tokens.max(breakdown.total_tokens);
    outcome.final_tokens = breakdown.total_tokens;
    let whole = built.summaries.is_empty()
        && built
            .messages
            .iter()
            .all(|m| m.view_state == pb::ViewState::Full as i32)
        && built.trimmed.is_none_or(|t| t.turns == 0);
    if whole && reported > 0 {
        outcome
            .errors_pct
            .push((breakdown.total_tokens - reported).abs() as f64 * 100.0 / reported as f64);
    }
    let request_text: Vec<String> = std::iter::once(built.system_prompt.clone())
        .chain(built.messages.iter().map(|m| {
            format!(
                "{}|{}|{}|{:?}",
                m.role, m.tool_call_id, m.content, m.tool_calls
            )
        }))
        .collect();
    if let Some(previous) = &previous
        && request_text.len() >= previous.len()
        && request_text[..previous.len()] == previous[..]
    {
        outcome.extending += 1;
    }
    *previous = Some(request_text);
}

fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

/// The per-session table, with a closing line over all sessions.
pub fn table(outcomes: &[Outcome], window: i64) -> String {
    let mut out = format!(
        "window {window}\n\nsession | messages | builds | peak tokens | final tokens | cleared | evicted | summaries | estimate error median / max % | cache-stable % | orphans | over budget | RPC p50 / p99 ms\n---|---|---|---|---|---|---|---|---|---|---|---|---\n"
    );
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    let (mut all_errors, mut all_latencies) = (Vec::new(), Vec::new());
    let (mut builds, mut extending, mut orphans, mut over) = (0, 0, 0, 0);
    for o in outcomes {
        let mut errors = o.errors_pct.clone();
        let mut latencies: Vec<f64> = o.latencies.iter().map(ms).collect();
        let error = if errors.is_empty() {
            "n/a".to_string()
        } else {
            format!(
                "{:.2} / {:.2}",
                quantile(&mut errors, 0.5),
                quantile(&mut errors, 1.0)
            )
        };
        out.push_str(&format!(
            "{} | {} | {} | {} | {} | {} | {} | {} | {error} | {:.1} | {} | {} | {:.1} / {:.1}\n",
            o.name,
            o.messages,
            o.builds,
            o.peak_tokens,
            o.final_tokens,
            o.stats.cleared_messages,
            o.stats.evicted_messages,
            o.stats.summaries_written,
            o.cache_stable_pct(),
            o.orphans,
            o.over_budget,
            quantile(&mut latencies, 0.5),
            quantile(&mut latencies, 0.99),
        ));
        all_errors.extend(errors);
        all_latencies.extend(latencies);
        builds += o.builds.saturating_sub(1);
        extending += o.extending;
        orphans += o.orphans;
        over += o.over_budget;
    }
    let stable = if builds > 0 {
        extending as f64 * 100.0 / builds as f64
    } else {
        100.0
    };
    let error = if all_errors.is_empty() {
        "n/a".to_string()
    } else {
        format!(
            "{:.2} / {:.2}",
            quantile(&mut all_errors, 0.5),
            quantile(&mut all_errors, 1.0)
        )
    };
    out.push_str(&format!(
        "all | {} | {} | | | | | | {error} | {stable:.1} | {orphans} | {over} | {:.1} / {:.1}\n",
        outcomes.iter().map(|o| o.messages).sum::<usize>(),
        outcomes.iter().map(|o| o.builds).sum::<usize>(),
        quantile(&mut all_latencies, 0.5),
        quantile(&mut all_latencies, 0.99),
    ));
    out
}
