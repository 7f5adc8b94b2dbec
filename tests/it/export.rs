//! ExportSession / ImportSession: every session of the recorded corpus, compacted at a
//! small window (with a fork and a finished child beside them), exported from one server
//! and imported into another on a database of its own, expands byte for byte and builds
//! the same requests there; `ctxd session export | ctxd session import` does the same
//! through the binary; a damaged, changed, cut or foreign file is INVALID_ARGUMENT naming
//! its record, and writes nothing.
use ctxd::pb;
use sha2::{Digest as _, Sha256};
use tokio_stream::StreamExt as _;

use crate::harness::*;
use crate::recorded::{corpus_files, load};
use crate::support::expand_all;

/// What a server answers about one session, for comparison across servers.
#[derive(Debug, PartialEq)]
struct Answers {
    expanded: Vec<pb::Message>,
    builds: Vec<pb::BuildMessagesResponse>,
    summaries: Vec<String>,
    ledger: Vec<pb::LedgerEntry>,
}

async fn answers(client: &mut Client, id: &str) -> Answers {
    let view = session_view(client, id).await;
    let session = view.session.unwrap();
    let mut builds = Vec::new();
    for format in [
        pb::OutputFormat::Neutral,
        pb::OutputFormat::AnthropicMessages,
    ] {
        builds.push(build(client, id, format).await.unwrap());
    }
    // Each server numbers its summaries: compare them by content.
    for build in &mut builds {
        build.summaries.iter_mut().for_each(|s| s.summary_id = 0);
    }
    Answers {
        expanded: expand_all(client, id, session.message_count).await,
        builds,
        summaries: view.summaries.into_iter().map(|s| s.content).collect(),
        ledger: view.ledger,
    }
}

pub async fn export(client: &mut Client, id: &str) -> Result<Vec<u8>, tonic::Status> {
    let mut stream = client
        .export_session(pb::ExportSessionRequest {
            session_id: id.into(),
        })
        .await?
        .into_inner();
    let mut file = Vec::new();
    while let Some(chunk) = stream.next().await {
        file.extend(chunk?.data);
    }
    Ok(file)
}

pub async fn import(
    client: &mut Client,
    as_id: &str,
    file: &[u8],
) -> Result<pb::ImportSessionResponse, tonic::Status> {
    let chunks: Vec<pb::ImportSessionRequest> = file
        .chunks(64 * 1024)
        .enumerate()
        .map(|(index, data)| pb::ImportSessionRequest {
            session_id: if index == 0 {
                as_id.into()
            } else {
                String::new()
            },
            data: data.to_vec(),
        })
        .collect();
    client
        .import_session(tokio_stream::iter(chunks))
        .await
        .map(tonic::Response::into_inner)
}

/// The corpus at a 16 000-token window, built before each assistant message as an agent
/// would (so it compacts), with a ledger todo; a fork of the first; a finished child.
async fn write_corpus(client: &mut Client) -> Vec<String> {
    let mut ids = Vec::new();
    for (index, file) in corpus_files().iter().enumerate() {
        let recorded = load(file);
        let id = format!("recorded-{index}");
        create(client, &id, window(16_000, 2_000)).await;
        append_as_agent(client, &id, &recorded, usize::MAX).await;
        ids.push(id);
    }
    client
        .update_ledger(pb::UpdateLedgerRequest {
            session_id: ids[0].clone(),
            todos: vec![pb::LedgerTodo {
                id: "fix".into(),
                text: "Fix the failing test.".into(),
                status: pb::TodoStatus::InProgress as i32,
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let fork = format!("{}.fork", ids[0]);
    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: ids[0].clone(),
            at_seq: Some(40),
            session_id: fork.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    ids.push(fork);
    ids.push(finished_child(client).await);
    ids
}

async fn finished_child(client: &mut Client) -> String {
    create(client, "tree", window(16_000, 2_000)).await;
    append(client, "tree", vec![user("Fix it."), call(&["spawn"])])
        .await
        .unwrap();
    client
        .create_session(pb::CreateSessionRequest {
            session_id: "tree.child".into(),
            parent_session_id: "tree".into(),
            parent_tool_call_id: "spawn".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let found = vec![
        user("Find the failing test."),
        assistant("test_views.py fails."),
    ];
    append(client, "tree.child", found).await.unwrap();
    client
        .finish_session(pb::FinishSessionRequest {
            session_id: "tree.child".into(),
            final_answer: "test_views.py fails.".into(),
            append_to_parent: true,
        })
        .await
        .unwrap();
    "tree.child".into()
}

/// Builds each session until it asks for no more compaction and its jobs are done: then a
/// build writes nothing new and both servers answer from the same state.
async fn at_rest(client: &mut Client, pool: &sqlx::PgPool, ids: &[String]) {
    for id in ids {
        build(client, id, pb::OutputFormat::OpenaiChat)
            .await
            .unwrap();
    }
    let idle = || async {
        sqlx::query_scalar::<_, i64>(
            "select count(*) from jobs where state in ('available', 'running', 'retryable')",
        )
        .fetch_one(pool)
        .await
        .is_ok_and(|busy| busy == 0)
    };
    assert!(crate::support::wait_until(idle).await, "jobs still pending");
}

#[tokio::test]
async fn every_corpus_session_moves_to_another_server_exactly() {
    let source_pool = fresh_database("export_source").await;
    let source = TestServer::start(source_pool.clone()).await;
    let mut from = source.client.clone();
    let ids = write_corpus(&mut from).await;
    at_rest(&mut from, &source_pool, &ids).await;

    let target = TestServer::start(fresh_database("export_target").await).await;
    let mut to = target.client.clone();
    let mut compacted = 0;
    for id in &ids {
        let file = export(&mut from, id).await.unwrap();
        let imported = import(&mut to, "", &file).await.unwrap();
        let session = imported.session.unwrap();
        assert_eq!(&session.session_id, id);
        let expected = answers(&mut from, id).await;
        compacted += usize::from(!expected.summaries.is_empty());
        let got = answers(&mut to, id).await;
        assert!(
            got.expanded == expected.expanded,
            "{id}: expands differently"
        );
        assert_eq!(got.summaries, expected.summaries, "{id}: summaries");
        assert_eq!(got.ledger, expected.ledger, "{id}: ledger");
        for (got, expected) in got.builds.iter().zip(&expected.builds) {
            assert_eq!(got.messages, expected.messages, "{id}: builds' messages");
            let strip = |b: &pb::BuildMessagesResponse| pb::BuildMessagesResponse {
                messages: Vec::new(),
                json: Default::default(),
                ..b.clone()
            };
            assert_eq!(strip(got), strip(expected), "{id}: builds");
        }
        // Exported again from its new server, it is the same file but for the time.
        let again = export(&mut to, id).await.unwrap();
        assert_eq!(
            without_times(&again),
            without_times(&file),
            "{id}: exported again"
        );
    }
    assert!(compacted >= 10, "only {compacted} sessions were summarized");
    let taken = import(&mut to, "", &export(&mut from, &ids[0]).await.unwrap()).await;
    assert_eq!(taken.unwrap_err().code(), tonic::Code::AlreadyExists);
    source.stop().await;
    target.stop().await;
}

/// The file's records without the header (its export time), the digest and the
/// summaries' ids (each server numbers its own): a summary's id and parent become its
/// place among the file's summaries.
fn without_times(file: &[u8]) -> Vec<serde_json::Value> {
    let mut records: Vec<serde_json::Value> = String::from_utf8(file.to_vec())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    records.remove(0);
    records.pop();
    let ids: Vec<serde_json::Value> = records
        .iter()
        .filter(|r| r["record"] == "summary")
        .map(|r| r["id"].clone())
        .collect();
    let place = |id: &serde_json::Value| ids.iter().position(|known| known == id);
    for record in records.iter_mut().filter(|r| r["record"] == "summary") {
        record["id"] = serde_json::json!(place(&record["id"]));
        record["parent"] = serde_json::json!(place(&record["parent"]));
    }
    records
}

/// `file` with its end record's digest made right again for what precedes it.
fn redigested(file: &str) -> Vec<u8> {
    let body_end = file.trim_end().rfind('\n').unwrap() + 1;
    let body = &file[..body_end];
    let records = body.lines().count();
    let digest: String = Sha256::digest(body.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{body}{{\"record\":\"end\",\"records\":{records},\"sha256\":\"{digest}\"}}\n")
        .into_bytes()
}

#[tokio::test]
async fn a_damaged_or_changed_file_is_refused_naming_its_record() {
    let server = TestServer::start(fresh_database("export_hostile").await).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(16_000, 2_000)).await;
    let turn = vec![
        user("Run the tests."),
        call(&["t1"]),
        result("t1", "2 failed"),
    ];
    append(&mut client, "s", turn).await.unwrap();
    let file = String::from_utf8(export(&mut client, "s").await.unwrap()).unwrap();

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "a byte changed",
            file.replacen("2 failed", "3 failed", 1).into_bytes(),
            "(end).sha256",
        ),
        (
            "cut short",
            file.as_bytes()[..file.len() / 2].to_vec(),
            "record",
        ),
        (
            "a newer version",
            redigested(&file.replacen("\"version\":1", "\"version\":2", 1)),
            "record 1 (header).version",
        ),
        (
            "a role unknown",
            redigested(&file.replacen("\"role\":\"user\"", "\"role\":\"robot\"", 1)),
            "(message).role",
        ),
        (
            "totals changed",
            redigested(&file.replacen("\"message_count\":3", "\"message_count\":4", 1)),
            "record 2 (session).state.message_count",
        ),
        (
            "a result without its call",
            redigested(&file.replacen("\"tool_call_id\":\"t1\"", "\"tool_call_id\":\"t9\"", 1)),
            "(message).tool_call_id",
        ),
        ("not this format", b"{\"hello\": 1}\n".to_vec(), "record 1"),
        ("empty", Vec::new(), "file"),
    ];
    for (what, bytes, field) in cases {
        let status = import(&mut client, "copy", &bytes).await.unwrap_err();
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{what}: {status:?}"
        );
        assert!(
            status.message().starts_with("record") && status.message().contains(field)
                || status.message().starts_with(field),
            "{what}: {}",
            status.message()
        );
        let found = client
            .get_session(pb::GetSessionRequest {
                session_id: "copy".into(),
                include_view: false,
            })
            .await;
        assert_eq!(
            found.unwrap_err().code(),
            tonic::Code::NotFound,
            "{what}: written"
        );
    }
    let imported = import(&mut client, "copy", file.as_bytes()).await.unwrap();
    assert_eq!(imported.messages, 3);
    server.stop().await;
}

/// The server runs on the test's runtime: the commands are awaited, not waited for.
#[tokio::test]
async fn the_cli_exports_to_a_file_and_imports_it() {
    let server = TestServer::start(fresh_database("export_cli").await).await;
    let mut client = server.client.clone();
    create(&mut client, "cli", window(16_000, 2_000)).await;
    let turn = vec![
        user("List the files."),
        call(&["l1"]),
        result("l1", "a.py b.py"),
    ];
    append(&mut client, "cli", turn).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cli.ctxd.jsonl");
    let addr = server.addr.to_string();
    let exported = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["session", "export", "cli", "--addr", &addr])
        .output()
        .await
        .unwrap();
    assert!(exported.status.success(), "{exported:?}");
    std::fs::write(&path, &exported.stdout).unwrap();
    assert_eq!(
        without_times(&exported.stdout),
        without_times(&export(&mut client, "cli").await.unwrap())
    );
    let imported = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args([
            "session",
            "import",
            path.to_str().unwrap(),
            "--as",
            "cli.copy",
        ])
        .env("CTXD_ADDRESS", &addr)
        .output()
        .await
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let said = String::from_utf8(imported.stdout).unwrap();
    assert_eq!(
        said,
        "imported session cli.copy: 3 messages, 0 summaries, 1 ledger entries\n"
    );
    let copy = expand_all(&mut client, "cli.copy", 3).await;
    assert_eq!(copy, expand_all(&mut client, "cli", 3).await);
    // A damaged file: the command fails, saying which record.
    std::fs::write(&path, b"{\"record\":\"header\"}\n").unwrap();
    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["session", "import", path.to_str().unwrap(), "--addr", &addr])
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("ImportSession: record 1"), "{stderr}");
    server.stop().await;
}
