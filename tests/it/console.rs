//! The console (`--console-listen`) in a real browser: a recorded session replayed into
//! ctxd at a small window (so it evicts and compacts), hostile text appended, then
//! Debian's headless Chromium (tests/console/browser.mjs, puppeteer-core) opens the
//! session list and the session. Checked: the window bar's regions add up to what
//! BuildMessages counted; an evicted message shows what the model sees and opens its
//! original byte-exact; an append from outside shows within 2 s (the live stream, resumed
//! by cursor, gives the next event); nothing a session
//! holds runs (no script, no dialog); no console error; no serious accessibility
//! violation (axe-core). And over HTTP: the API is tenant-scoped like the RPCs, and
//! every answer carries a Content-Security-Policy without inline script.
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use ctxd::auth::Auth;
use ctxd::console::Console;
use ctxd::engine::{Engine, EngineConfig};
use ctxd::pb;
use ctxd::policy::Policy;
use ctxd::store::Store;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::recorded::{corpus_files, load};

const SESSION: &str = "console-demo";
/// Compacted into summaries; metadata team=blue.
const SUMMARIZED: &str = "console-summarized";
/// A fork of SUMMARIZED; a subagent child of SESSION; 2 000 messages.
const FORK: &str = "console-fork";
const CHILD: &str = "console-child";
/// CHILD's parent, whose open tool call started it.
const PARENT: &str = "console-parent";
const LONG: &str = "console-long";
const HOSTILE: &str = "<script>window.__ctxd_xss = true</script><img src=x onerror=\"window.__ctxd_xss = true\"> <a href=\"javascript:window.__ctxd_xss = true\">click</a> javascript:window.__ctxd_xss=true";

/// The console on loopback, in this process, over `pool`; keyless calls served as the
/// `default` tenant when `anonymous`.
async fn start_console(pool: PgPool, anonymous: bool) -> (String, CancellationToken) {
    let store = Store::new(pool);
    let engine = Engine::new(
        store.clone(),
        EngineConfig::new(Policy::default(), 1024 * 1024),
    );
    let auth = Arc::new(Auth::new(store, anonymous).await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let console = Arc::new(Console::new(engine, auth, &shutdown));
    tokio::spawn(ctxd::console::serve(
        listener,
        console,
        None,
        shutdown.clone(),
    ));
    (url, shutdown)
}

/// A recorded session's first messages, builds before its assistant turns, a large tool
/// result evicted, and hostile text; the evicted result's seq and content.
async fn replay(client: &mut Client) -> (i64, String) {
    create(client, SESSION, window(24_000, 2_000)).await;
    let recorded = load(&corpus_files()[0]);
    for (message, usage) in recorded.messages.iter().take(60) {
        if usage.is_some() {
            build(client, SESSION, pb::OutputFormat::Neutral)
                .await
                .unwrap();
        }
        append(client, SESSION, vec![message.clone()])
            .await
            .unwrap();
    }
    let output: String = (0..400)
        .map(|line| format!("line {line}: <b>bold</b> & \"quoted\" output\n"))
        .collect();
    let mut call = crate::harness::call(&["console-call"]);
    call.content = HOSTILE.to_string();
    let appended = append(client, SESSION, vec![call, result("console-call", &output)])
        .await
        .unwrap();
    assert_eq!(appended.evicted_seqs.len(), 1, "{appended:?}");
    append(client, SESSION, vec![user(HOSTILE)]).await.unwrap();
    (appended.evicted_seqs[0], output)
}

type Client = pb::context_service_client::ContextServiceClient<tonic::transport::Channel>;

/// The sessions around the demo: a recorded session compacted into summaries at a
/// 16 000-token window (metadata team=blue), a fork of it, a subagent's session under
/// the tool call that started it, and a session of 2 000 messages.
async fn companions(client: &mut Client) {
    // Two summaries condense into one: the tree has a condensed level to open.
    let policy = pb::Policy {
        condense_fanin: Some(2),
        ..window(16_000, 2_000)
    };
    let request = pb::CreateSessionRequest {
        session_id: SUMMARIZED.into(),
        policy: Some(policy),
        metadata: [("team".to_string(), "blue".to_string())].into(),
        ..Default::default()
    };
    client.create_session(request).await.unwrap();
    let recorded = load(&corpus_files()[1]);
    for (message, usage) in recorded.messages.iter().take(200) {
        if usage.is_some() {
            build(client, SUMMARIZED, pb::OutputFormat::Neutral)
                .await
                .unwrap();
        }
        append(client, SUMMARIZED, vec![message.clone()])
            .await
            .unwrap();
    }
    build(client, SUMMARIZED, pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let fork = pb::ForkSessionRequest {
        source_session_id: SUMMARIZED.into(),
        at_seq: Some(10),
        session_id: FORK.into(),
        ..Default::default()
    };
    client.fork_session(fork).await.unwrap();
    create(client, PARENT, window(200_000, 4_000)).await;
    let task = vec![user("delegate"), crate::harness::call(&["console-task"])];
    append(client, PARENT, task).await.unwrap();
    let child = pb::CreateSessionRequest {
        session_id: CHILD.into(),
        parent_session_id: PARENT.into(),
        parent_tool_call_id: "console-task".into(),
        ..Default::default()
    };
    client.create_session(child).await.unwrap();
    create(client, LONG, window(1_000_000, 4_000)).await;
    for batch in 0..20 {
        let messages = (0..100)
            .map(|n| match n % 2 {
                0 => user(&format!("question {batch}.{n}")),
                _ => assistant(&format!("answer {batch}.{n}")),
            })
            .collect();
        append(client, LONG, messages).await.unwrap();
    }
}

#[sqlx::test]
async fn the_console_shows_a_session_in_a_real_browser(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let (evicted, original) = replay(&mut client).await;
    companions(&mut client).await;
    let built = build(&mut client, SESSION, pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let counted = built.budget.unwrap().breakdown.unwrap();
    let (url, shutdown) = start_console(pool, true).await;

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/console/browser.mjs");
    let mut browser = Command::new("node")
        .arg(script)
        .env("CONSOLE_URL", &url)
        .env("SESSION", SESSION)
        .env("EVICTED_SEQ", evicted.to_string())
        .env("SUMMARIZED", SUMMARIZED)
        .env("LONG", LONG)
        .envs(std::env::var("CTXD_CONSOLE_SCREENSHOTS").map(|dir| ("SCREENSHOTS", dir)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node (tests/console: npm ci, and Debian's chromium)");
    let mut stdin = browser.stdin.take().unwrap();
    let stdout = browser.stdout.take().unwrap();
    let (said, mut lines) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = said.send(line);
        }
    });
    // The browser's steps take seconds; a hang fails the test rather than the suite.
    let patience = std::time::Duration::from_secs(120);
    let said = async |lines: &mut tokio::sync::mpsc::UnboundedReceiver<String>| {
        tokio::time::timeout(patience, lines.recv())
            .await
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let ready = said(&mut lines).await;
    if !ready.starts_with("ready ") {
        let _ = browser.kill();
        let _ = browser.wait();
        panic!("the browser said {ready:?}");
    }
    append(&mut client, SESSION, vec![user("appended from outside")])
        .await
        .unwrap();
    writeln!(stdin, "appended").unwrap();
    let report = said(&mut lines).await;
    let status = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + patience;
        while std::time::Instant::now() < deadline {
            if let Some(status) = browser.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = browser.kill();
        None
    })
    .await
    .unwrap();
    println!("browser: {report}");
    assert!(
        status.is_some_and(|status| status.success()),
        "the browser script failed or hung: {report}"
    );
    let seen: serde_json::Value = serde_json::from_str(&report).unwrap();

    assert!(
        seen["listed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|id| id == SESSION)
    );
    // The list: searched by id and by metadata; forks and children under their source
    // and parent.
    assert_eq!(seen["byId"], serde_json::json!([SUMMARIZED]));
    // The fork holds its source's metadata.
    assert_eq!(seen["byMeta"], serde_json::json!([SUMMARIZED, FORK]));
    let depths = &seen["depths"];
    assert_eq!((&depths[PARENT], &depths[CHILD]), (&0.into(), &1.into()));
    assert_eq!((&depths[SUMMARIZED], &depths[FORK]), (&0.into(), &1.into()));
    // A summary's sources are the messages it covers: Expand of the summary.
    let summary = &seen["summary"];
    let expanded = client
        .expand(pb::ExpandRequest {
            session_id: SUMMARIZED.into(),
            target: Some(pb::expand_request::Target::SummaryId(
                summary["id"].as_i64().unwrap(),
            )),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let seqs: Vec<i64> = expanded.messages.iter().map(|m| m.seq).collect();
    assert!(!seqs.is_empty());
    assert_eq!(summary["sources"], serde_json::json!(seqs));
    assert_eq!(summary["first"].as_i64(), seqs.first().copied());
    assert_eq!(summary["last"].as_i64(), seqs.last().copied());
    // The actions ran through their confirmations: a compaction, its revert, a fork.
    let said = seen["compactSaid"].as_str().unwrap();
    assert!(
        said.starts_with("Compact would take the request from"),
        "{said}"
    );
    let said = seen["revertSaid"].as_str().unwrap();
    // (A compaction and every later one in force: Compact may have cleared and then
    // summarized.)
    assert!(said.starts_with("Reverting would undo "), "{said}");
    assert!(!said.starts_with("Reverting would undo 0 "), "{said}");
    let history = reqwest::get(format!("{url}/api/sessions/{SESSION}/events"))
        .await
        .unwrap();
    let history: serde_json::Value = serde_json::from_str(&history.text().await.unwrap()).unwrap();
    let kinds: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["kind"].as_str().unwrap())
        .collect();
    // In order: the compaction the page reverted (a clearing or a summary), its revert,
    // then the fork (announced on the source).
    let events = history["events"].as_array().unwrap();
    let reverted_seq: i64 = seen["revertedEvent"].as_str().unwrap().parse().unwrap();
    let reverted = events
        .iter()
        .find(|event| event["seq"] == reverted_seq)
        .unwrap_or_else(|| panic!("no event {reverted_seq}: {kinds:?}"));
    assert!(
        ["CompactionCompleted", "ToolResultsCleared"].contains(&reverted["kind"].as_str().unwrap()),
        "{reverted}"
    );
    let revert = events
        .iter()
        .find(|event| event["kind"] == "CompactionReverted")
        .unwrap_or_else(|| panic!("no CompactionReverted: {kinds:?}"));
    assert!(revert["seq"].as_i64().unwrap() > reverted_seq, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"SessionForked"), "{kinds:?}");
    let forked = client
        .get_session(pb::GetSessionRequest {
            session_id: "console-forked".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(forked.forked_from_session_id, SESSION);
    assert_eq!(
        (forked.message_count, seen["forkedRows"].as_i64()),
        (5, Some(5))
    );
    // A condensed summary opens to the summaries it was made of: they cover its span,
    // one after the other.
    let condensed = &seen["condensed"];
    let spans: Vec<(i64, i64)> = condensed["children"]
        .as_array()
        .unwrap_or_else(|| panic!("no condensed summary opened: {condensed}"))
        .iter()
        .map(|span| (span[0].as_i64().unwrap(), span[1].as_i64().unwrap()))
        .collect();
    assert!(spans.len() >= 2, "{condensed}");
    assert_eq!(Some(spans[0].0), condensed["first"].as_i64(), "{condensed}");
    assert_eq!(
        spans.last().map(|s| s.1),
        condensed["last"].as_i64(),
        "{condensed}"
    );
    assert!(
        spans.windows(2).all(|w| w[1].0 == w[0].1 + 1),
        "{condensed}"
    );
    // 2 000 messages: the page shows its first hundred within a second.
    let long_ms = seen["longRenderMs"].as_i64().unwrap();
    assert!(
        long_ms < 1_000,
        "a 2 000-message session rendered in {long_ms} ms"
    );
    assert_eq!(seen["longRows"], 100);
    // The bar's regions are what the last BuildMessages counted (the ledger's block with
    // the system prompt there, with the summaries here: the sum is the same).
    let segments = &seen["segments"];
    let region = |name: &str| segments[name].as_i64().unwrap_or(0);
    let bar: i64 = [
        "system",
        "tools",
        "summaries",
        "full",
        "pinned",
        "cleared",
        "evicted",
    ]
    .iter()
    .map(|name| region(name))
    .sum();
    let regions = counted.system_tokens
        + counted.summary_tokens
        + counted.history_tokens
        + counted.tool_tokens;
    assert_eq!(
        bar, regions,
        "{segments} against {counted:?}, trimmed {:?}",
        built.trimmed
    );
    assert_eq!(region("reserve"), counted.output_reserve_tokens);
    assert!(region("evicted") > 0, "{segments}");
    assert_eq!(
        seen["thresholds"],
        serde_json::json!(["clear", "summarize", "limit"])
    );
    // The evicted result: the placeholder the model sees, then the original, byte-exact.
    assert_eq!(seen["evictedState"], "evicted");
    assert_ne!(seen["modelSees"].as_str().unwrap(), original);
    assert_eq!(seen["original"].as_str().unwrap(), original);
    let appeared = seen["appearedMs"].as_i64();
    assert!(
        appeared.is_some_and(|ms| ms <= 2_000),
        "an append from outside showed after {appeared:?} ms"
    );
    // The chart of each build: one point per recorded build, the last one the estimate
    // BuildMessages reported, the window drawn, the evictions and compactions marked.
    let chart = &seen["chart"];
    assert!(chart["points"].as_i64().unwrap() >= 2, "{chart}");
    assert_eq!(chart["circles"], chart["points"]);
    assert_eq!(chart["lastEstimate"], counted.total_tokens);
    assert_eq!(chart["windowLines"], 1);
    assert!(chart["marks"].as_i64().unwrap() >= 1, "{chart}");
    // The live stream, resumed by cursor: the first event, then the one after it.
    assert_eq!(seen["live"], serde_json::json!([1, 2]));
    // Nothing a session held ran, no script or image element came from it.
    assert_eq!(seen["ran"], false);
    assert_eq!(seen["scripts"], 0);
    assert_eq!(seen["dialogs"], 0);
    assert_eq!(seen["errors"], serde_json::json!([]));
    assert_eq!(seen["violations"], serde_json::json!([]));
    shutdown.cancel();
    server.stop().await;
}

/// A keyless console answers a page at an address or a one-label name, never at a dotted
/// name: a page whose own name was rebound to the console's address (DNS rebinding) is
/// same-origin with it, so only the Host it was asked by tells the two apart.
#[sqlx::test]
async fn a_keyless_console_answers_no_rebound_name(pool: PgPool) {
    let (url, shutdown) = start_console(pool, true).await;
    let port = url.rsplit(':').next().unwrap();
    let http = reqwest::Client::new();
    for (host, status) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("evil.example:{port}"), 401),
    ] {
        let answer = http
            .get(format!("{url}/api/sessions"))
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), status, "{host}");
        if status == 401 {
            assert!(answer.text().await.unwrap().contains("host"), "{host}");
        }
    }
    shutdown.cancel();
}

#[sqlx::test]
async fn the_console_api_is_tenant_scoped_and_sends_a_strict_policy(pool: PgPool) {
    let store = Store::new(pool.clone());
    let (key_a, key_b) = (
        ctxd::auth::generate_key().unwrap(),
        ctxd::auth::generate_key().unwrap(),
    );
    for (tenant, key) in [("a", &key_a), ("b", &key_b)] {
        store
            .add_api_key(tenant, &ctxd::auth::hash_key(key), tenant)
            .await
            .unwrap();
    }
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let mut request = tonic::Request::new(pb::CreateSessionRequest {
        session_id: "b-only".into(),
        ..Default::default()
    });
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key_b}").parse().unwrap());
    client.create_session(request).await.unwrap();
    let (url, shutdown) = start_console(pool, false).await;
    let http = reqwest::Client::new();
    let get = |path: &str, key: Option<&str>| {
        let mut request = http.get(format!("{url}{path}"));
        if let Some(key) = key {
            request = request.header("x-ctxd-key", key);
        }
        request.send()
    };
    let status = |response: reqwest::Response| response.status().as_u16();
    assert_eq!(
        status(get("/api/sessions/b-only", Some(&key_b)).await.unwrap()),
        200
    );
    assert_eq!(
        status(get("/api/sessions/b-only", Some(&key_a)).await.unwrap()),
        404
    );
    assert_eq!(
        status(
            get("/api/sessions/b-only/messages", Some(&key_a))
                .await
                .unwrap()
        ),
        404
    );
    assert_eq!(
        status(get("/api/sessions/b-only", Some("nonsense")).await.unwrap()),
        401
    );
    // Its own tenant reads them (b-only has no summary 1: 404 there too).
    for (call, own) in [
        ("summaries", 200),
        ("summaries/1/sources", 404),
        ("summaries/1/children", 404),
        ("ledger", 200),
        ("events", 200),
    ] {
        let path = format!("/api/sessions/b-only/{call}");
        assert_eq!(
            status(get(&path, Some(&key_a)).await.unwrap()),
            404,
            "{call}"
        );
        assert_eq!(
            status(get(&path, Some(&key_b)).await.unwrap()),
            own,
            "{call}"
        );
    }
    // This console serves no keyless call (as a gRPC port on a configured database).
    assert_eq!(status(get("/api/sessions", None).await.unwrap()), 401);
    let listed = get("/api/sessions", Some(&key_a)).await.unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed.text().await.unwrap()).unwrap();
    assert_eq!(listed["sessions"], serde_json::json!([]));
    // Bad input: a sentence naming the field; an unknown call; a method the console
    // does not take.
    let bad = get("/api/sessions/b-only/messages?limit=100000", Some(&key_b))
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let said: serde_json::Value = serde_json::from_str(&bad.text().await.unwrap()).unwrap();
    assert!(
        said["error"]["message"].as_str().unwrap().contains("limit"),
        "{said}"
    );
    for (path, field) in [
        ("/api/sessions?meta=no-pair", "meta"),
        ("/api/sessions?id=%zz", "id"),
        ("/api/sessions/b-only/summaries/x/sources", "summary"),
    ] {
        let bad = get(path, Some(&key_b)).await.unwrap();
        assert_eq!(bad.status().as_u16(), 400, "{path}");
        let said: serde_json::Value = serde_json::from_str(&bad.text().await.unwrap()).unwrap();
        let message = said["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{path}: {said}");
    }
    assert_eq!(
        status(get("/api/nothing", Some(&key_b)).await.unwrap()),
        404
    );
    let posted = http
        .post(format!("{url}/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status().as_u16(), 405);
    // An action: only from the console's own page, for the caller's tenant, a dry run
    // unless told otherwise.
    let act = |path: &str, key: &str, headers: &[(&str, &str)]| {
        let mut request = http
            .post(format!("{url}/api/sessions/b-only/actions/{path}"))
            .header("x-ctxd-key", key);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let page = ("x-ctxd-console", "action");
    for (headers, named) in [
        (vec![], "x-ctxd-console"),
        (vec![page, ("origin", "http://elsewhere.example")], "origin"),
        (
            vec![page, ("sec-fetch-site", "cross-site")],
            "sec-fetch-site",
        ),
    ] {
        let refused = act("compact", &key_b, &headers).await.unwrap();
        assert_eq!(refused.status().as_u16(), 403, "{headers:?}");
        let said = refused.text().await.unwrap();
        assert!(said.contains(named), "{headers:?}: {said}");
    }
    let own_origin = ("origin", url.as_str());
    let other_tenant = act("compact", &key_a, &[page, own_origin]).await.unwrap();
    assert_eq!(other_tenant.status().as_u16(), 404);
    let dry = act("compact", &key_b, &[page, own_origin]).await.unwrap();
    assert_eq!(dry.status().as_u16(), 200);
    let dry: serde_json::Value = serde_json::from_str(&dry.text().await.unwrap()).unwrap();
    assert_eq!(dry["applied"], false, "{dry}");
    assert_eq!(
        act("nothing", &key_b, &[page])
            .await
            .unwrap()
            .status()
            .as_u16(),
        405
    );
    let unnamed = act("fork", &key_b, &[page]).await.unwrap();
    assert_eq!(unnamed.status().as_u16(), 400);
    assert!(unnamed.text().await.unwrap().contains("at"));
    for path in ["/", "/console.js", "/api/sessions"] {
        let response = get(path, Some(&key_a)).await.unwrap();
        let policy = response
            .headers()
            .get("content-security-policy")
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(policy.contains("script-src 'self'"), "{path}: {policy}");
        assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    }
    shutdown.cancel();
    server.stop().await;
}
