//! `ctxd eval`: compaction measured against the strategies the anchors document. The
//! recorded sessions are replayed through ctxd (a running server) and through pure
//! re-implementations of OpenCode / BaseAgent, Codex, deepagents / LangChain, PicoClaw's
//! seahorse and Anthropic context editing — each summarizing with ctxd's extractive
//! summarizer and counting with its tokenizer, so only the strategy differs — and every
//! request of every strategy is measured the same way: billed input with prompt
//! caching, cache-stable requests, window use, over-budget requests, orphaned tool pairs
//! and retention of the facts of what is no longer verbatim.
pub mod context_editing;
pub mod cost;
pub mod deepagents;
pub mod facts;
pub mod meter;
pub mod providers;
pub mod recall;
pub mod report;
pub mod seahorse;
pub mod server;
pub mod strategies;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;

use ctxd_core::message::{Message, Role};
use ctxd_core::tokenize::ToolDefinition;

use crate::replay::BoxError;
use ctxd_server::pb;
use facts::SessionFacts;
use meter::{Meter, Totals};
use strategies::{Setup, Strategy};

/// The strategies, in report order; ctxd first.
pub const STRATEGIES: [&str; 6] = [
    "ctxd",
    "opencode",
    "codex",
    "deepagents",
    "seahorse",
    "context-editing",
];

/// How an eval runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: String,
    pub tls: crate::client::ClientTls,
    pub api_key: Option<String>,
    /// The sets of recorded sessions (`*.traj.json.gz`, `*.json`): each directory is
    /// read by name.
    pub corpus: Vec<PathBuf>,
    /// How many of each set (the first by name); 0: all.
    pub sessions: usize,
    pub windows: Vec<i64>,
    /// Sessions replayed at once (through the server, and in process).
    pub jobs: usize,
    /// Write `compaction-eval.md` and `compaction-eval.svg` into this directory.
    pub out: Option<PathBuf>,
    pub progress: bool,
}

/// The tool every recorded request offered (mini-swe-agent's bash tool).
pub fn bash_tool() -> ToolDefinition {
    ToolDefinition {
        name: "bash".into(),
        description: "Execute a bash command".into(),
        parameters_json_schema: r#"{"type":"object","properties":{"command":{"type":"string","description":"The bash command to execute"}},"required":["command"]}"#.into(),
    }
}

fn bash_tools_pb() -> pb::Tools {
    let tool = bash_tool();
    pb::Tools {
        tools: Some(pb::tools::Tools::Definitions(pb::ToolDefinitionList {
            items: vec![pb::ToolDefinition {
                name: tool.name,
                description: tool.description,
                parameters_json_schema: tool.parameters_json_schema,
            }],
        })),
    }
}

/// One recorded session, loaded once.
pub struct Session {
    pub name: String,
    /// The set it came from (its directory's name) and its project (its file name up to
    /// the issue number: `django__django-11099` is `django`).
    pub set: String,
    pub project: String,
    pub system: String,
    pub recorded: Vec<pb::Message>,
    pub messages: Vec<Message>,
    pub facts: SessionFacts,
}

impl Session {
    /// Indexes of the assistant messages: a request is built before each.
    pub fn steps(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.messages.len()).filter(|&i| self.messages[i].role == Role::Assistant)
    }
}

/// A strategy by name, for one window.
pub fn strategy(name: &str, setup: Setup, system: &str) -> Option<Box<dyn Strategy>> {
    Some(match name {
        "opencode" => Box::new(strategies::OpenCode::new(setup, system)),
        "codex" => Box::new(strategies::Codex::new(setup, system)),
        "deepagents" => Box::new(deepagents::DeepAgents::new(setup, system)),
        "seahorse" => Box::new(seahorse::Seahorse::new(setup, system)),
        "context-editing" => Box::new(context_editing::ContextEditing::new(setup, system)),
        _ => return None,
    })
}

/// Runs the re-implemented strategies over one session in every window.
/// Returns (index in [`STRATEGIES`], window, figures).
pub fn run_anchors(
    session: &Session,
    windows: &[i64],
) -> Result<Vec<(usize, i64, Totals)>, String> {
    let tools = [bash_tool()];
    let mut out = Vec::new();
    for &window in windows {
        let setup = Setup::new(window, &session.system, &tools)?;
        for (index, name) in STRATEGIES.iter().enumerate().skip(1) {
            let mut strategy = strategy(name, setup.clone(), &session.system)
                .ok_or_else(|| format!("unknown strategy {name}"))?;
            let mut meter = Meter::new(&setup, &session.facts, &tools, &session.system);
            for step in session.steps() {
                let build = strategy.build(&session.messages[..step]);
                meter.add(step, &build);
            }
            out.push((index, window, meter.finish()));
        }
    }
    Ok(out)
}

/// Loads the first `count` recorded sessions of `corpus` (all when 0), by name.
pub fn load(corpus: &std::path::Path, count: usize) -> Result<Vec<Session>, BoxError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map_err(|error| format!("{}: {error}", corpus.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path.to_string_lossy();
            name.ends_with(".json.gz") || name.ends_with(".json")
        })
        .collect();
    files.sort();
    if count > 0 {
        files.truncate(count);
    }
    if files.is_empty() {
        return Err(format!(
            "{}: no recorded sessions (*.json, *.json.gz)",
            corpus.display()
        )
        .into());
    }
    files
        .iter()
        .map(|path| {
            let recorded = crate::replay::load(path)?;
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().to_string())
                .unwrap_or_default();
            let name = name.split(".traj").next().unwrap_or(&name).to_string();
            let set = corpus
                .file_name()
                .map(|set| set.to_string_lossy().to_string())
                .unwrap_or_default();
            let recorded_messages: Vec<pb::Message> = recorded
                .messages
                .into_iter()
                .map(|(message, _)| message)
                .collect();
            let messages: Vec<Message> = recorded_messages.iter().map(server::to_core).collect();
            Ok(Session {
                project: project_of(&name),
                set,
                name,
                system: recorded.system,
                facts: SessionFacts::new(&messages),
                recorded: recorded_messages,
                messages,
            })
        })
        .collect()
}

/// A session's project: its name after the owner (`owner__`) and before the issue
/// number (`-1234`).
pub fn project_of(name: &str) -> String {
    let repo = name.split_once("__").map_or(name, |(_, repo)| repo);
    match repo.rsplit_once('-') {
        Some((project, number)) if number.chars().all(|c| c.is_ascii_digit()) => project.into(),
        _ => repo.into(),
    }
}

/// What an eval found: per (strategy, window), the figures over all sessions, and per
/// group (`set NAME`, `project NAME`) the same.
pub struct Results {
    pub sessions: usize,
    pub windows: Vec<i64>,
    pub totals: BTreeMap<(usize, i64), Totals>,
    pub groups: BTreeMap<(String, usize, i64), Totals>,
    pub summaries_written: i64,
    pub summaries_seen: i64,
    pub elapsed: Duration,
}

impl Results {
    /// Adds one session's figures of a strategy and window: to the whole, its set and
    /// its project.
    fn add(&mut self, session: &Session, strategy: usize, window: i64, totals: &Totals) {
        self.totals
            .entry((strategy, window))
            .or_default()
            .add(totals);
        for group in [
            format!("set {}", session.set),
            format!("project {}", session.project),
        ] {
            let key = (group, strategy, window);
            self.groups.entry(key).or_default().add(totals);
        }
    }
}

/// One session replayed through the server at one window and measured: the window,
/// its totals, the summaries written and those the model was shown.
async fn ctxd_run(
    mut client: server::Client,
    tools: pb::Tools,
    api_key: Option<String>,
    session: Arc<Session>,
    window: i64,
) -> Result<(Arc<Session>, i64, Totals, i64, i64), BoxError> {
    let key = api_key.as_deref();
    let session_id = server::create(&mut client, key, window).await?;
    let replayed = async {
        let mut replayed = server::replay_into(
            &mut client,
            key,
            &session_id,
            &session.system,
            &session.recorded,
            &tools,
        )
        .await?;
        if let Some((history, last)) = replayed.builds.last() {
            replayed.recall = recall::measure(
                &mut client,
                key,
                &session_id,
                &session.facts,
                *history,
                last,
            )
            .await?;
        }
        Ok::<_, BoxError>(replayed)
    }
    .await;
    server::delete(&mut client, key, session_id).await?;
    let replayed = replayed?;
    let measured = tokio::task::spawn_blocking(move || {
        let bash = [bash_tool()];
        let setup = Setup::new(window, &session.system, &bash)?;
        let mut meter = Meter::new(&setup, &session.facts, &bash, &session.system);
        for (step, build) in &replayed.builds {
            meter.add(*step, build);
        }
        let mut totals = meter.finish();
        totals.units += replayed.unseen_input as f64;
        totals.summarizer_input += replayed.unseen_input;
        for (dollars, (_, input, _, _)) in totals.provider_dollars.iter_mut().zip(providers::PRICES)
        {
            *dollars += replayed.unseen_input as f64 * input / 1e6;
        }
        totals.recall_found += replayed.recall.found;
        totals.recall_recovered += replayed.recall.recovered;
        totals.recall_asked += replayed.recall.asked;
        let shown = replayed.summaries_written - replayed.unseen;
        Ok::<_, String>((session, window, totals, replayed.summaries_written, shown))
    })
    .await??;
    Ok(measured)
}

/// Runs the eval and returns the report (Markdown).
pub async fn run(options: &Options) -> Result<String, BoxError> {
    let started = std::time::Instant::now();
    let mut sessions: Vec<Arc<Session>> = Vec::new();
    for set in &options.corpus {
        sessions.extend(load(set, options.sessions)?.into_iter().map(Arc::new));
    }
    let channel = crate::client::connect(
        &options.addr,
        &options.tls,
        Duration::from_secs(5),
        Duration::from_secs(300),
    )
    .await?;
    let client = server::Client::new(channel).max_decoding_message_size(usize::MAX);
    let jobs = options.jobs.max(1);
    let tools = bash_tools_pb();
    let ctxd_runs = futures::stream::iter(sessions.iter().flat_map(|session| {
        options
            .windows
            .iter()
            .map(move |&window| (session.clone(), window))
    }))
    .map(|(session, window)| {
        let (client, tools, api_key) = (client.clone(), tools.clone(), options.api_key.clone());
        ctxd_run(client, tools, api_key, session, window)
    })
    .buffer_unordered(jobs);
    let anchor_runs = futures::stream::iter(sessions.iter().cloned())
        .map(|session| {
            let windows = options.windows.clone();
            async move {
                let measured = tokio::task::spawn_blocking({
                    let session = session.clone();
                    move || run_anchors(&session, &windows)
                })
                .await
                .map_err(BoxError::from)?
                .map_err(BoxError::from)?;
                Ok::<_, BoxError>((session, measured))
            }
        })
        .buffer_unordered(jobs);
    let mut results = Results {
        sessions: sessions.len(),
        windows: options.windows.clone(),
        totals: BTreeMap::new(),
        groups: BTreeMap::new(),
        summaries_written: 0,
        summaries_seen: 0,
        elapsed: Duration::ZERO,
    };
    let total_runs = sessions.len() * (options.windows.len() + 1);
    let mut done = 0;
    let mut ctxd_runs = std::pin::pin!(ctxd_runs);
    let mut anchor_runs = std::pin::pin!(anchor_runs);
    let (mut ctxd_open, mut anchors_open) = (true, true);
    while ctxd_open || anchors_open {
        tokio::select! {
            next = ctxd_runs.next(), if ctxd_open => match next {
                Some(measured) => {
                    let (session, window, totals, written, seen) = measured?;
                    results.add(&session, 0, window, &totals);
                    results.summaries_written += written;
                    results.summaries_seen += seen;
                    done += 1;
                }
                None => ctxd_open = false,
            },
            next = anchor_runs.next(), if anchors_open => match next {
                Some(measured) => {
                    let (session, measured) = measured?;
                    for (index, window, totals) in measured {
                        results.add(&session, index, window, &totals);
                    }
                    done += 1;
                }
                None => anchors_open = false,
            },
        }
        if options.progress {
            eprint!("\r{done}/{total_runs} session runs   ");
        }
    }
    if options.progress {
        eprintln!();
    }
    results.elapsed = started.elapsed();
    let table = report::markdown(&results);
    if let Some(dir) = &options.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
        };
        write("compaction-eval.md", table.clone())?;
        write("compaction-eval.svg", report::svg(&results))?;
    }
    Ok(table)
}
