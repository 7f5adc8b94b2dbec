//! Real coding agents, unmodified, through the provider endpoint: Claude Code (npm
//! `@anthropic-ai/claude-code`, streamed Anthropic Messages), Codex CLI (npm
//! `@openai/codex`, streamed OpenAI Responses) and mini-swe-agent (PyPI, OpenAI Chat
//! Completions through litellm). Each runs a scripted coding task — list,
//! read three large notes and the code, run the failing test, fix the code, run the test
//! again — against the fake model on loopback, at a window small enough that ctxd
//! compacts during the run. The agent must exit 0 with the workspace fixed; the fake
//! checks every request; the provider key the agent holds must reach the upstream and
//! appear nowhere in ctxd's log, metrics or database.
//!
//! Claude Code and Codex run with the recall tools on (`--proxy-recall-tools`): midway
//! the model searches its history and expands what it found, and ctxd answers both
//! calls itself — the agent never sees them (it would answer an unknown tool), the
//! streams it reads are the final answers' only, and each round is announced.
//!
//! The agents are installed by `tests/agents/install` (scripts/test runs it):
//! `CTXD_CLAUDE_BIN` and `CTXD_MINI_BIN` name them, else the install's paths.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;

use ctxd::recall::SEARCH;

use super::fake::{Fake, Step};
use crate::binary::{free_port, terminate, wait_serving};

/// The window of the agents' sessions: Claude Code's system prompt and tools alone are
/// about 12 500 tokens.
const WINDOW: i64 = 32_000;
const OUTPUT_RESERVE: i64 = 4_000;

/// A note of about 6 000 tokens, in short lines (agents' file readers cut long ones).
fn note(n: usize) -> String {
    (0..600)
        .map(|line| format!("note {n} line {line}: the quick brown fox jumps over the lazy dog\n"))
        .collect()
}

/// A workspace with a bug: `add` subtracts, and its test says so.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=3 {
        std::fs::write(dir.path().join(format!("notes{n}.txt")), note(n)).unwrap();
    }
    std::fs::write(
        dir.path().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("test_calc.py"),
        "from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('tests pass')\n",
    )
    .unwrap();
    dir
}

fn tests_pass(dir: &Path) -> bool {
    Command::new("python3")
        .arg("test_calc.py")
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// A ctxd serving the provider endpoint in front of `fake`, its log in `log`.
struct Ctxd {
    child: Child,
    proxy: String,
    metrics: String,
    /// What ctxd exported over OTLP (its spans and metrics).
    otlp: tokio::sync::mpsc::UnboundedReceiver<crate::otlp::Received>,
    stop_otlp: tokio_util::sync::CancellationToken,
}

async fn start_ctxd(database_url: &str, fake: &Fake, log: &Path, recall: bool) -> Ctxd {
    let (otlp_addr, otlp, stop_otlp, _) = crate::otlp::start_receiver().await;
    let (grpc, proxy, metrics) = (free_port(), free_port(), free_port());
    let grpc_addr = format!("127.0.0.1:{grpc}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["serve", "--listen", &grpc_addr])
        .args(["--proxy-listen", &format!("127.0.0.1:{proxy}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics}")])
        .args([
            "--upstream-anthropic",
            &fake.url(),
            "--upstream-openai",
            &fake.url(),
        ])
        .args(["--policy-context-window-tokens", &WINDOW.to_string()])
        .args(["--policy-max-output-tokens", &OUTPUT_RESERVE.to_string()])
        .args([
            "--proxy-recall-tools",
            if recall { "true" } else { "false" },
        ])
        .env("DATABASE_URL", database_url)
        // On its test database, a deployment refuses calls without a key unless told.
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "debug")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{otlp_addr}"))
        .env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    wait_serving(&grpc_addr, &mut child).await;
    Ctxd {
        child,
        proxy: format!("http://127.0.0.1:{proxy}"),
        metrics: format!("http://127.0.0.1:{metrics}/metrics"),
        otlp,
        stop_otlp,
    }
}

fn agent_bin(variable: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default));
    assert!(
        path.exists(),
        "{} is missing: run tests/agents/install (scripts/test does), or set {variable}",
        path.display()
    );
    path
}

/// After a run: the fake's checks, compaction in the session, and the key nowhere in
/// ctxd's log, metrics or database.
async fn assert_run(fake: &Fake, pool: &sqlx::PgPool, ctxd: Ctxd, log: &Path, key: &str) {
    let metrics = reqwest::get(&ctxd.metrics)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    terminate(ctxd.child).await;
    // ctxd flushes its exports as it stops: every span it made is in.
    let mut otlp = ctxd.otlp;
    let mut exported = String::new();
    while let Ok(received) = otlp.try_recv() {
        exported.push_str(&format!("{received:?}"));
    }
    ctxd.stop_otlp.cancel();
    assert!(exported.contains("\"proxy\""), "no proxy span was exported");
    assert!(
        !exported.contains(key),
        "the provider key is in ctxd's traces or OTLP metrics"
    );
    let record = fake.record.lock().unwrap();
    assert!(
        record.violations.is_empty(),
        "the fake upstream's checks: {:#?}",
        record.violations
    );
    assert!(
        record.keys_seen.iter().any(|seen| seen.contains(key)),
        "the provider key did not reach the upstream"
    );
    let compactions: i64 =
        sqlx::query_scalar("select count(*) from events where kind in (2, 4, 5)")
            .fetch_one(pool)
            .await
            .unwrap();
    assert!(
        compactions > 0,
        "ctxd compacted nothing in {} requests",
        record.requests
    );
    assert!(
        record.restarts as i64 <= compactions,
        "{} requests restarted the cached prefix, more than the {compactions} compactions",
        record.restarts
    );
    eprintln!(
        "agent run: {} requests, {} restarts, {compactions} compaction events, largest request {} tokens (window {WINDOW})",
        record.requests, record.restarts, record.max_tokens
    );
    let log_text = std::fs::read_to_string(log).unwrap();
    assert!(!log_text.contains(key), "the provider key is in ctxd's log");
    assert!(
        !metrics.contains(key),
        "the provider key is in ctxd's metrics"
    );
    assert!(
        metrics.contains("http_server_request_duration_seconds_count")
            && metrics.contains("http_route=\"/v1/"),
        "the endpoint's requests are not in the metrics"
    );
    let leaked: i64 = sqlx::query_scalar(
        "select count(*) from (select to_jsonb(m)::text as t from messages m union all select to_jsonb(e)::text from events e \
         union all select to_jsonb(s)::text from sessions s union all select to_jsonb(h)::text from proxy_heads h) rows where t like '%' || $1 || '%'",
    )
    .bind(key)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(leaked, 0, "the provider key is in the database");
}

/// One agent's run: its workspace, the fake model, a fresh database, and ctxd in front.
struct Run {
    dir: tempfile::TempDir,
    fake: Fake,
    pool: sqlx::PgPool,
    logs: tempfile::TempDir,
    ctxd: Ctxd,
    home: tempfile::TempDir,
}

impl Run {
    async fn start(dir: tempfile::TempDir, script: Vec<Step>, database: &str) -> Run {
        let recall = script
            .iter()
            .any(|step| matches!(step, Step::Call(name, _) if *name == SEARCH));
        let fake = Fake::start(script, WINDOW).await;
        let (pool, url) = crate::harness::fresh_database_url(database).await;
        let logs = tempfile::tempdir().unwrap();
        let ctxd = start_ctxd(&url, &fake, &logs.path().join("ctxd.log"), recall).await;
        let home = tempfile::tempdir().unwrap();
        Run {
            dir,
            fake,
            pool,
            logs,
            ctxd,
            home,
        }
    }

    /// Runs the agent in the workspace, its home a fresh one: it must exit 0 and leave
    /// the workspace fixed. Its stdout.
    async fn agent(&self, mut command: tokio::process::Command) -> String {
        let output = command
            .current_dir(self.dir.path())
            .env("HOME", self.home.path())
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "the agent exited with {}: {stdout}{stderr}",
            output.status
        );
        let code = std::fs::read_to_string(self.dir.path().join("calc.py"));
        assert!(
            tests_pass(self.dir.path()),
            "the workspace is not fixed: {code:?}; the agent printed {stdout}"
        );
        stdout
    }

    /// The recall rounds ctxd answered, (tool, round): a search, then an expand, in one
    /// agent request.
    async fn assert_recalled(&self) {
        let rows: Vec<(serde_json::Value,)> =
            sqlx::query_as("select detail from events where kind = 11 order by id")
                .fetch_all(&self.pool)
                .await
                .unwrap();
        let answered: Vec<(String, i64, bool)> = rows
            .iter()
            .map(|(detail,)| {
                let tool = detail["tool"].as_str().unwrap_or("").to_string();
                let round = detail["round"].as_i64().unwrap_or(0);
                (tool, round, detail["error"].as_bool().unwrap_or(true))
            })
            .collect();
        let expected = [
            ("search".to_string(), 1, false),
            ("expand".to_string(), 2, false),
        ];
        assert_eq!(answered, expected, "the recall rounds ctxd answered");
    }

    async fn finish(self, key: &str) {
        let log = self.logs.path().join("ctxd.log");
        assert_run(&self.fake, &self.pool, self.ctxd, &log, key).await;
    }
}

#[tokio::test]
async fn claude_code_runs_a_scripted_task_through_ctxd() {
    let claude = agent_bin("CTXD_CLAUDE_BIN", "tests/agents/node_modules/.bin/claude");
    let dir = workspace();
    let ws = dir.path().to_str().unwrap().to_string();
    let file = |name: &str| format!("{ws}/{name}");
    let bash = |command: &str, description: &str| {
        Step::Call(
            "Bash",
            json!({"command": command, "description": description}),
        )
    };
    let script = vec![
        bash("ls", "List the files"),
        Step::Call("Read", json!({"file_path": file("notes1.txt")})),
        Step::Call("Read", json!({"file_path": file("notes2.txt")})),
        Step::Call("Read", json!({"file_path": file("notes3.txt")})),
        // Answered by ctxd, unseen by Claude Code.
        Step::Call(SEARCH, json!({"query": "note 1 line 5"})),
        Step::ExpandFound,
        Step::Call("Read", json!({"file_path": file("calc.py")})),
        bash("python3 test_calc.py", "Run the test"),
        Step::Call(
            "Edit",
            json!({"file_path": file("calc.py"), "old_string": "a - b", "new_string": "a + b"}),
        ),
        bash("python3 test_calc.py", "Run the test again"),
        Step::Answer("Fixed: add adds."),
    ];
    let run = Run::start(dir, script, "agent_claude").await;
    let key = "sk-ant-fake-0123456789-never-logged";
    let mut command = tokio::process::Command::new(claude);
    command
        .args(["-p", "Fix the failing test in this directory."])
        .args(["--allowedTools", "Bash(*) Read Edit"])
        .env("ANTHROPIC_BASE_URL", &run.ctxd.proxy)
        .env("ANTHROPIC_API_KEY", key)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let stdout = run.agent(command).await;
    assert!(
        stdout.contains("Fixed: add adds."),
        "claude printed: {stdout}"
    );
    // Claude Code marks cache breakpoints in its history; the history ctxd rebuilds
    // keeps one, so the provider caches the conversation.
    let record = run.fake.record.lock().unwrap();
    let (marked, requests) = (record.history_breakpoints, record.requests);
    drop(record);
    assert_eq!(
        marked, requests,
        "requests without a breakpoint in their messages"
    );
    run.assert_recalled().await;
    run.finish(key).await;
}

#[tokio::test]
async fn mini_swe_agent_runs_a_scripted_task_through_ctxd() {
    let mini = agent_bin("CTXD_MINI_BIN", ".ctxd/venv-agents/bin/mini");
    let bash = |command: &'static str| Step::Call("bash", json!({"command": command}));
    let script = vec![
        bash("ls"),
        bash("cat notes1.txt"),
        bash("cat notes2.txt"),
        bash("cat notes3.txt"),
        bash("cat calc.py"),
        bash("python3 test_calc.py"),
        bash("sed -i 's/a - b/a + b/' calc.py"),
        bash("python3 test_calc.py"),
        bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ];
    let run = Run::start(workspace(), script, "agent_mini").await;
    let key = "sk-openai-fake-0123456789-never-logged";
    let trajectory = run.logs.path().join("trajectory.json");
    let mut command = tokio::process::Command::new(mini);
    command
        .args([
            "-m",
            "openai/fake-model",
            "-t",
            "Fix the failing test in this directory.",
        ])
        .args(["-y", "--exit-immediately", "-c", "mini.yaml"])
        .args([
            "-c",
            &format!("model.model_kwargs.api_base={}/v1", run.ctxd.proxy),
        ])
        .args(["-c", "model.cost_tracking=ignore_errors"])
        .args(["-o", trajectory.to_str().unwrap()])
        .env("MSWEA_CONFIGURED", "true")
        .env("OPENAI_API_KEY", key)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
    run.agent(command).await;
    run.finish(key).await;
}

#[tokio::test]
async fn codex_runs_a_scripted_task_through_ctxd() {
    let codex = agent_bin("CTXD_CODEX_BIN", "tests/agents/node_modules/.bin/codex");
    let exec = |cmd: &'static str| Step::Call("exec_command", json!({"cmd": cmd}));
    let script = vec![
        exec("ls"),
        exec("cat notes1.txt"),
        exec("cat notes2.txt"),
        exec("cat notes3.txt"),
        // Answered by ctxd, unseen by Codex.
        Step::Call(SEARCH, json!({"query": "note 1 line 5"})),
        Step::ExpandFound,
        exec("cat calc.py"),
        exec("python3 test_calc.py"),
        exec("sed -i 's/a - b/a + b/' calc.py"),
        exec("python3 test_calc.py"),
        Step::Answer("Fixed: add adds."),
    ];
    let run = Run::start(workspace(), script, "agent_codex").await;
    let key = "sk-codex-fake-0123456789-never-logged";
    let provider = |setting: &str| format!("model_providers.ctxd.{setting}");
    let mut command = tokio::process::Command::new(codex);
    command
        .args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ])
        .args(["-c", "model_provider=ctxd", "-c", "model=gpt-5"])
        .args(["-c", &format!("{}=\"ctxd\"", provider("name"))])
        .args([
            "-c",
            &format!("{}=\"{}/v1\"", provider("base_url"), run.ctxd.proxy),
        ])
        .args(["-c", &format!("{}=\"OPENAI_API_KEY\"", provider("env_key"))])
        .args(["-c", &format!("{}=\"responses\"", provider("wire_api"))])
        .arg("Fix the failing test in this directory.")
        .env("OPENAI_API_KEY", key);
    let stdout = run.agent(command).await;
    assert!(
        stdout.contains("Fixed: add adds."),
        "codex printed: {stdout}"
    );
    run.assert_recalled().await;
    run.finish(key).await;
}
