//! Metrics as an SRE scrapes them: the `ctxd` binary with `--metrics-listen`, a real
//! Prometheus scraping it every second, and queries through Prometheus' HTTP API that
//! see the RPCs and the compactions an agent loop caused.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::*;

/// The `prometheus` binary on PATH; the test fails (never skips) without it.
fn prometheus_binary() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("prometheus"))
            .find(|candidate| candidate.is_file())
    });
    found.expect(
        "the metrics test needs the prometheus server binary on PATH: install it \
         (Debian/Ubuntu: apt-get install -y prometheus; .ci/run does this in CI)",
    )
}

/// A child process killed when the test ends, however it ends.
pub(crate) struct Killed(Option<Child>);

impl Killed {
    pub(crate) fn new(child: Child) -> Killed {
        Killed(Some(child))
    }

    /// The child, no longer killed on drop (for an orderly stop).
    pub(crate) fn into_inner(mut self) -> Child {
        self.0.take().expect("a child")
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts Prometheus scraping `target` every second, with its storage in `dir`; its
/// log goes to `dir/prometheus.log`.
fn start_prometheus(dir: &Path, target: &str, web: &str) -> Killed {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: ctxd\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let child = Command::new(prometheus_binary())
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("cannot start prometheus");
    Killed(Some(child))
}

/// The value of an instant query's single result, `None` while it has none.
async fn query(http: &reqwest::Client, web: &str, promql: &str) -> Option<f64> {
    let response = http
        .get(format!("http://{web}/api/v1/query"))
        .query(&[("query", promql)])
        .send()
        .await
        .ok()?;
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    let value = body["data"]["result"].get(0)?["value"].get(1)?.as_str()?;
    value.parse().ok()
}

/// Polls `promql` until `accept` holds for its value, failing after a minute with the
/// last value and Prometheus' log.
async fn wait_for(
    http: &reqwest::Client,
    web: &str,
    promql: &str,
    accept: impl Fn(f64) -> bool,
    dir: &Path,
) -> f64 {
    let mut last = None;
    let every = Duration::from_millis(200);
    let accepted = crate::support::poll(Duration::from_secs(60), every, async || {
        last = query(http, web, promql).await;
        last.filter(|value| accept(*value))
    })
    .await;
    accepted.unwrap_or_else(|| {
        let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        panic!("{promql} stayed at {last:?}; prometheus log tail: {tail:#?}");
    })
}

/// A turn whose tool output is about 600 tokens.
fn turn(n: usize) -> Vec<pb::Message> {
    let id = format!("c{n}");
    // About 600 tokens: under the eviction size of the loop's window (750).
    let output: String = (0..60)
        .map(|i| format!("file{n} {i:05} lorem ipsum dolor sit amet\n"))
        .collect();
    vec![
        user(&format!("Step {n}: show the next file.")),
        call(&[&id]),
        result(&id, &output),
        assistant(&format!("Read file {n}.")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_rpc_and_compaction_metrics() {
    let prometheus = prometheus_binary();
    let dir = tempfile::Builder::new()
        .prefix("ctxd-metrics")
        .tempdir_in("/tmp")
        .unwrap();
    let (_pool, url) = fresh_database_url("metrics").await;
    let addr = format!("127.0.0.1:{}", free_port());
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let web = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args([
            "serve",
            "--listen",
            &addr,
            "--metrics-listen",
            &metrics_addr,
            // Room for the loop; the burst at the end is refused, for the quota metric.
            "--quota-requests-per-sec",
            "0.01",
            "--quota-requests-burst",
            "200",
        ])
        .env("DATABASE_URL", &url)
        // On its test database, a deployment refuses calls without a key unless told.
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "warn")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    let ctxd = Killed(Some(child));
    let _prometheus = start_prometheus(dir.path(), &metrics_addr, &web);
    assert!(prometheus.is_file());

    // An agent's loop in a small window until BuildMessages clears old tool results.
    let channel = channel(addr.parse().unwrap()).await;
    let mut client = ContextServiceClient::new(channel);
    // Clearing down to 9 000 tokens saves enough that no summarization follows.
    let policy = pb::Policy {
        clear_target: Some(0.45),
        ..window(20_000, 2_000)
    };
    create(&mut client, "loop", policy).await;
    // A subscriber, so deliveries and their lag are recorded.
    let mut events = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "loop".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut builds = 0;
    let mut cleared = false;
    for n in 0..40 {
        append(&mut client, "loop", turn(n)).await.unwrap();
        let built = build(&mut client, "loop", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        builds += 1;
        if built
            .messages
            .iter()
            .any(|m| m.view_state == pb::ViewState::Cleared as i32)
        {
            cleared = true;
            break;
        }
    }
    assert!(cleared, "the loop never compacted");
    let delivered = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let item = events.message().await.unwrap().expect("the stream ended");
            if let Some(pb::subscribe_events_response::Item::Event(event)) = item.item {
                break event;
            }
        }
    })
    .await
    .expect("the subscriber got no event within a minute");
    assert!(delivered.kind > 0);
    // Past the request burst: refused, and counted under the limit's name.
    let mut refused = 0;
    for _ in 0..250 {
        if let Err(status) = session_of(&mut client, "loop").await {
            assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
            refused += 1;
        }
    }
    assert!(refused > 0, "the burst was never refused");

    // The endpoint's own text passes promtool's checks.
    let http = reqwest::Client::new();
    let text = http
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    promtool_check(&text);
    // The pool's waiting requests are exported while none waits (0), not left out.
    assert!(
        text.lines().any(|line| line.starts_with(
            "db_client_connection_pending_requests{db_client_connection_pool_name=\"main\"} "
        )),
        "no pending requests gauge for the main pool:\n{text}"
    );

    let rpcs = wait_for(
        &http,
        &web,
        "sum(rpc_server_duration_seconds_count{rpc_method=\"BuildMessages\",rpc_grpc_status_code=\"0\"})",
        |value| value >= f64::from(builds),
        dir.path(),
    )
    .await;
    assert_eq!(rpcs, f64::from(builds), "every BuildMessages counted once");
    let appends = wait_for(
        &http,
        &web,
        "sum(rpc_server_duration_seconds_count{rpc_method=\"AppendTurn\"})",
        |value| value >= f64::from(builds),
        dir.path(),
    )
    .await;
    assert_eq!(appends, f64::from(builds));
    wait_for(
        &http,
        &web,
        "sum(ctxd_compactions_total{ctxd_compaction_kind=\"clearing\"})",
        |value| value > 0.0,
        dir.path(),
    )
    .await;
    wait_for(
        &http,
        &web,
        "sum(ctxd_compaction_tokens_removed_total)",
        |value| value >= 2_000.0,
        dir.path(),
    )
    .await;
    wait_for(
        &http,
        &web,
        "sum(ctxd_build_tokens_count{ctxd_build_region=\"history\"})",
        |value| value >= f64::from(builds),
        dir.path(),
    )
    .await;
    // The gauges read the pool and (within a few seconds) the jobs table.
    wait_for(
        &http,
        &web,
        "sum(db_client_connection_max)",
        |value| value >= 1.0,
        dir.path(),
    )
    .await;
    // Exported while no request waits (0), so the series exists from the first scrape.
    wait_for(
        &http,
        &web,
        "count(db_client_connection_pending_requests{db_client_connection_pool_name=\"main\"})",
        |value| value == 1.0,
        dir.path(),
    )
    .await;
    wait_for(
        &http,
        &web,
        "count(ctxd_jobs)",
        |value| value == 3.0,
        dir.path(),
    )
    .await;
    wait_for(
        &http,
        &web,
        "sum(ctxd_quota_rejections_total{ctxd_quota_limit=\"quota_requests_per_sec\"})",
        |value| value >= f64::from(refused),
        dir.path(),
    )
    .await;
    wait_for(
        &http,
        &web,
        "sum(ctxd_events_deliveries_total)",
        |value| value >= 1.0,
        dir.path(),
    )
    .await;
    // The loop's plain appends go through the batch writer: each batch statement is
    // counted once with its appends, never more appends than AppendTurns.
    let batches = wait_for(
        &http,
        &web,
        "sum(ctxd_append_batch_duration_seconds_count)",
        |value| value >= 1.0,
        dir.path(),
    )
    .await;
    let batched = wait_for(
        &http,
        &web,
        "sum(ctxd_append_batch_size_sum)",
        |value| value >= batches,
        dir.path(),
    )
    .await;
    assert!(batched <= appends, "{batched} batched appends of {appends}");
    // Both histograms are recorded once for each batch (one scrape, one query).
    wait_for(
        &http,
        &web,
        "sum(ctxd_append_batch_size_count) - sum(ctxd_append_batch_duration_seconds_count)",
        |value| value == 0.0,
        dir.path(),
    )
    .await;
    dashboard_queries_work(&http, &web, dir.path()).await;
    terminate(ctxd.into_inner()).await;
}

async fn session_of(client: &mut Client, id: &str) -> Result<pb::Session, tonic::Status> {
    client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: false,
        })
        .await
        .map(|response| response.into_inner().session.unwrap())
}

/// Prometheus' whole answer to an instant query.
async fn query_body(http: &reqwest::Client, web: &str, promql: &str) -> serde_json::Value {
    let response = http
        .get(format!("http://{web}/api/v1/query"))
        .query(&[("query", promql)])
        .send()
        .await
        .unwrap();
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Series the dashboard draws that only a summarizer model (none in this test) records.
const NEEDS_A_MODEL: [&str; 6] = [
    "ctxd_summarizer_calls_total",
    "gen_ai_client_operation_duration_seconds_bucket",
    "gen_ai_client_token_usage_sum",
    "ctxd_job_attempts_total",
    "ctxd_job_ends_total",
    "ctxd_job_rescues_total",
];

/// Every query of the Grafana dashboard in deploy/ is valid PromQL to this Prometheus,
/// and every series it reads is one ctxd exports: each returns data after the loop,
/// except the summarizer's and the jobs' (listed in [`NEEDS_A_MODEL`]).
async fn dashboard_queries_work(http: &reqwest::Client, web: &str, dir: &Path) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/grafana/ctxd-dashboard.json"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            let promql = expr.replace("$__rate_interval", "5m");
            let body = query_body(http, web, &promql).await;
            assert_eq!(body["status"], "success", "{expr}: {body}");
            if NEEDS_A_MODEL.iter().any(|name| expr.contains(name)) {
                checked += 1;
                continue;
            }
            // Rates need two scrapes of the series: poll until the query has data.
            let mut body = serde_json::Value::Null;
            let every = Duration::from_millis(250);
            let data = crate::support::poll(Duration::from_secs(60), every, async || {
                body = query_body(http, web, &promql).await;
                let result = body["data"]["result"].as_array();
                result
                    .is_some_and(|result| !result.is_empty())
                    .then_some(())
            })
            .await;
            if data.is_none() {
                let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
                panic!("the dashboard's query {expr} has no data: {body}; log: {log}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} dashboard queries found");
}

/// `promtool check metrics` parses the text, and its only lint is the one the
/// OpenTelemetry semantic conventions' name `db.client.connection.count` earns (a
/// gauge ending in `_count`).
fn promtool_check(text: &str) {
    use std::io::Write as _;
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (installed with prometheus) must be on PATH");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = promtool.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // 0: clean; 3: lint problems only; anything else: the text did not parse.
    let code = output.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "promtool check metrics ({code:?}): {report}\n{text}"
    );
    for problem in report.lines() {
        assert!(
            problem.starts_with("db_client_connection_count "),
            "promtool check metrics: {problem}\n{text}"
        );
    }
}
