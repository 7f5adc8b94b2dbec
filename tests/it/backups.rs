//! Backups give every session back exactly: sessions of the recorded corpus compacted at
//! a small window, a fork and a finished child, on a PostgreSQL that archives its WAL;
//! then the two procedures of docs/operations.md#backups, each into a fresh cluster — a
//! logical dump (`pg_dump -Fc`, `pg_restore`), and a base backup (`pg_basebackup`, taken
//! before half of the sessions were written) recovered to the end of the archived WAL.
//! On each, a ctxd lists the same sessions, expands every one byte for byte as the source
//! does, and builds the same request (neutral and Anthropic) as the source at the moment
//! of the backup.
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ctxd::localpg::LocalPostgres;
use ctxd::pb;
use sqlx::PgPool;

use crate::harness::*;
use crate::recorded::{corpus_files, load};
use crate::support::{expand_all, pg_bin, postgres_user, wait_until};

/// Everything a ctxd answers about the sessions of a database, in one comparable value.
#[derive(Debug, PartialEq)]
struct Snapshot {
    sessions: Vec<pb::Session>,
    expanded: Vec<Vec<pb::Message>>,
    builds: Vec<pb::BuildMessagesResponse>,
}

#[tokio::test]
async fn a_dump_and_a_base_backup_restore_every_session_exactly() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-backup")
        .tempdir_in("/tmp")
        .unwrap();
    let archive = owned_dir(dir.path(), "archive");
    let source_dir = dir.path().join("source");
    let source = archiving(&source_dir, &archive).await;
    let pool = PgPool::connect(&source.url()).await.unwrap();
    ctxd::store::MIGRATOR.run(&pool).await.unwrap();

    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    write_sessions(&mut client, 0..2).await;
    let base = owned_dir(dir.path(), "pitr").join("pgdata");
    run_as_server(Command::new(pg_bin().join("pg_basebackup")).args([
        "-D",
        &base.display().to_string(),
        "-X",
        "none",
        "-d",
        &source.url(),
    ]));
    write_sessions(&mut client, 2..4).await;
    drained(&pool).await;
    server.stop().await;

    let dump = dir.path().join("ctxd.dump");
    run(Command::new(pg_bin().join("pg_dump")).args([
        "-Fc",
        "-f",
        &dump.display().to_string(),
        "-d",
        &source.url(),
    ]));
    archived(&pool).await;
    pool.close().await;
    let expected = snapshot_of(&source.url()).await;
    assert!(expected.sessions.len() >= 6, "{:?}", expected.sessions);

    let restored = LocalPostgres::start(&dir.path().join("restored"))
        .await
        .unwrap();
    run(Command::new(pg_bin().join("pg_restore")).args([
        "--no-owner",
        "-d",
        &restored.url(),
        &dump.display().to_string(),
    ]));
    same(&snapshot_of(&restored.url()).await, &expected, "pg_restore");

    recover_from(&base, &archive);
    let recovered = LocalPostgres::start(base.parent().unwrap()).await.unwrap();
    promoted(&recovered.url()).await;
    same(
        &snapshot_of(&recovered.url()).await,
        &expected,
        "base backup and archived WAL",
    );
    for postgres in [source, restored, recovered] {
        postgres.stop().await.unwrap();
    }
}

/// A private PostgreSQL that copies every finished WAL segment into `archive`.
async fn archiving(dir: &Path, archive: &Path) -> LocalPostgres {
    let postgres = LocalPostgres::start(dir).await.unwrap();
    let pool = PgPool::connect(&postgres.url()).await.unwrap();
    let command = format!("test ! -f {0}/%f && cp %p {0}/%f", archive.display());
    for statement in [
        "alter system set archive_mode = 'on'".to_string(),
        format!("alter system set archive_command = '{command}'"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    // archive_mode takes a restart.
    postgres.stop().await.unwrap();
    LocalPostgres::start(dir).await.unwrap()
}

/// Recorded sessions `range` of the corpus at a 16 000-token window, built before each
/// assistant message as an agent would (so they compact), with a fork of the first and
/// a finished child of the second.
async fn write_sessions(client: &mut Client, range: std::ops::Range<usize>) {
    let files = corpus_files();
    for index in range.clone() {
        let recorded = load(&files[index]);
        let id = format!("recorded-{index}");
        create(client, &id, window(16_000, 2_000)).await;
        append_as_agent(client, &id, &recorded, 120).await;
        // Compacted as far as its next request needs: the snapshots' builds then write
        // nothing (a summary written after a recovery takes a new id, as PostgreSQL's
        // sequences continue past what they handed out before a crash or a recovery).
        build(client, &id, pb::OutputFormat::OpenaiChat)
            .await
            .unwrap();
    }
    let first = format!("recorded-{}", range.start);
    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: first.clone(),
            at_seq: Some(40),
            session_id: format!("{first}.fork"),
            ..Default::default()
        })
        .await
        .unwrap();
    let parent = format!("tree-{}", range.start);
    create(client, &parent, window(16_000, 2_000)).await;
    append(
        client,
        &parent,
        vec![user("Fix the failing test."), call(&["spawn"])],
    )
    .await
    .unwrap();
    let child = format!("{parent}.child");
    client
        .create_session(pb::CreateSessionRequest {
            session_id: child.clone(),
            parent_session_id: parent,
            parent_tool_call_id: "spawn".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let found = vec![
        user("Find the failing test."),
        assistant("test_views.py fails."),
    ];
    append(client, &child, found).await.unwrap();
    client
        .finish_session(pb::FinishSessionRequest {
            session_id: child,
            final_answer: "test_views.py fails.".into(),
            append_to_parent: true,
        })
        .await
        .unwrap();
}

/// Asserts a restored database answers as the source did, naming the first session
/// that differs and in what.
fn same(restored: &Snapshot, source: &Snapshot, how: &str) {
    let ids = |snapshot: &Snapshot| -> Vec<String> {
        snapshot
            .sessions
            .iter()
            .map(|s| s.session_id.clone())
            .collect()
    };
    assert_eq!(ids(restored), ids(source), "{how}: the sessions listed");
    for (index, session) in source.sessions.iter().enumerate() {
        let id = &session.session_id;
        assert_eq!(&restored.sessions[index], session, "{how}: {id} as listed");
        assert!(
            restored.expanded[index] == source.expanded[index],
            "{how}: {id} expands differently"
        );
        for format in 0..2 {
            let at = index * 2 + format;
            assert_eq!(
                restored.builds[at], source.builds[at],
                "{how}: {id} builds differently"
            );
        }
    }
}

/// What a ctxd on `url` answers about every session it lists.
async fn snapshot_of(url: &str) -> Snapshot {
    let pool = PgPool::connect(url).await.unwrap();
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let sessions = client
        .list_sessions(pb::ListSessionsRequest {
            page_size: 1000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sessions;
    let mut snapshot = Snapshot {
        sessions,
        expanded: Vec::new(),
        builds: Vec::new(),
    };
    for session in &snapshot.sessions {
        let id = &session.session_id;
        snapshot
            .expanded
            .push(expand_all(&mut client, id, session.message_count).await);
        for format in [
            pb::OutputFormat::Neutral,
            pb::OutputFormat::AnthropicMessages,
        ] {
            snapshot
                .builds
                .push(build(&mut client, id, format).await.unwrap());
        }
    }
    server.stop().await;
    pool.close().await;
    snapshot
}

/// Waits until no summarization job is queued or running: the database is at rest.
async fn drained(pool: &PgPool) {
    let rest = || async {
        sqlx::query_scalar::<_, i64>(
            "select count(*) from jobs where state in ('available', 'running', 'retryable')",
        )
        .fetch_one(pool)
        .await
        .is_ok_and(|busy| busy == 0)
    };
    assert!(wait_until(rest).await, "summarization jobs still pending");
}

/// Closes the current WAL segment and waits until the archive holds it.
async fn archived(pool: &PgPool) {
    let segment: String = sqlx::query_scalar("select pg_walfile_name(pg_switch_wal())")
        .fetch_one(pool)
        .await
        .unwrap();
    let done = || async {
        sqlx::query_scalar::<_, Option<String>>("select last_archived_wal from pg_stat_archiver")
            .fetch_one(pool)
            .await
            .ok()
            .flatten()
            .is_some_and(|last| last >= segment)
    };
    assert!(wait_until(done).await, "WAL segment {segment} not archived");
}

/// Makes a base backup recover from the archive to its end, then take writes; it does
/// not archive itself.
fn recover_from(base: &Path, archive: &Path) {
    use std::io::Write as _;
    let mut conf = std::fs::OpenOptions::new()
        .append(true)
        .open(base.join("postgresql.auto.conf"))
        .unwrap();
    writeln!(
        conf,
        "restore_command = 'cp {}/%f %p'\narchive_mode = 'off'",
        archive.display()
    )
    .unwrap();
    std::fs::File::create(base.join("recovery.signal")).unwrap();
    chown_to_server(&base.join("recovery.signal"));
}

/// Waits until a recovering server has replayed the archive and takes writes.
async fn promoted(url: &str) {
    let pool = PgPool::connect(url).await.unwrap();
    let writable = || async {
        sqlx::query_scalar::<_, bool>("select not pg_is_in_recovery()")
            .fetch_one(&pool)
            .await
            .unwrap_or(false)
    };
    assert!(wait_until(writable).await, "recovery did not finish");
    pool.close().await;
}

/// A directory the PostgreSQL server's user can write.
fn owned_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    chown_to_server(parent);
    chown_to_server(&dir);
    dir
}

fn chown_to_server(path: &Path) {
    if is_root() {
        let (uid, gid) = postgres_user();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

/// Runs a PostgreSQL tool as the server's user (its files must be the server's).
fn run_as_server(command: &mut Command) {
    if is_root() {
        let (uid, gid) = postgres_user();
        command.uid(uid).gid(gid);
    }
    run(command);
}

fn run(command: &mut Command) {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
