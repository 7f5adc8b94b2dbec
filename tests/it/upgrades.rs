//! Upgrades: `ctxd migrate --dry-run` lists and applies nothing; `serve --no-migrate`
//! and the admin commands never migrate and refuse a schema that lacks what they need,
//! naming it; a running ctxd keeps serving, nothing lost, while a newer release's
//! (expand) migration is applied under it, and starts again on that schema; a contract
//! migration newer than what it knows makes it refuse to start, naming it.
use std::process::{Command, Output, Stdio};

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use sqlx::PgPool;

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::{append, build, channel, create, empty_database_url, user, window};

fn ctxd(url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxd"));
    command
        .args(args)
        .env("DATABASE_URL", url)
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "warn");
    command
}

fn run(url: &str, args: &[&str]) -> Output {
    ctxd(url, args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn migrated(pool: &PgPool) -> i64 {
    let exists: bool = sqlx::query_scalar("select to_regclass('_sqlx_migrations') is not null")
        .fetch_one(pool)
        .await
        .unwrap();
    if !exists {
        return 0;
    }
    sqlx::query_scalar("select count(*) from _sqlx_migrations")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn nothing_but_migrate_applies_migrations() {
    let url = empty_database_url("upgrades").await;
    let pool = PgPool::connect(&url).await.unwrap();
    let known = ctxd::store::schema::known();
    let last = known.last().unwrap();

    let dry = run(&url, &["migrate", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let listed = text(&dry.stdout);
    assert!(listed.starts_with("would apply: 0001 core"), "{listed}");
    assert!(
        listed.contains(&format!("{:04} {}", last.version, last.description)),
        "{listed}"
    );
    assert_eq!(migrated(&pool).await, 0, "a dry run applies nothing");

    for args in [
        &["tenant", "create", "acme"][..],
        &["key", "list"][..],
        &[
            "serve",
            "--no-migrate",
            "--listen",
            &format!("127.0.0.1:{}", free_port()),
        ][..],
    ] {
        let refused = run(&url, args);
        let said = text(&refused.stderr);
        assert!(
            !refused.status.success(),
            "{args:?} ran on an unmigrated schema"
        );
        assert!(
            said.contains("lacks migrations this ctxd needs: 0001 core")
                && said.contains("ctxd migrate"),
            "{args:?}: {said}"
        );
        assert_eq!(migrated(&pool).await, 0, "{args:?} applied migrations");
    }

    let applied = run(&url, &["migrate"]);
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    assert_eq!(migrated(&pool).await, known.len() as i64);
    let dry = run(&url, &["migrate", "--dry-run"]);
    assert_eq!(
        text(&dry.stdout),
        "nothing to apply: the schema has every migration this ctxd carries\n"
    );
    let tenant = run(&url, &["tenant", "create", "acme"]);
    assert!(tenant.status.success(), "{}", text(&tenant.stderr));
    pool.close().await;
}

/// A newer release's migration as the expand/contract rule allows one: a table, a
/// nullable column, a column with a default.
const EXPAND: &str = "create table future_notes (id bigint primary key, note text);
alter table messages add column future_label text;
alter table sessions add column future_flag boolean not null default false;
insert into _sqlx_migrations (version, description, success, checksum, execution_time)
values (99990001, 'future notes', true, '\\x00', 0)";

/// A contract migration that removes what binaries before 99990001 still use.
const CONTRACT: &str =
    "insert into _sqlx_migrations (version, description, success, checksum, execution_time)
values (99990002, 'contract 99990001 drop x', true, '\\x00', 0)";

async fn serve(
    url: &str,
    extra: &[&str],
) -> (
    std::process::Child,
    ContextServiceClient<tonic::transport::Channel>,
) {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut args = vec!["serve", "--listen", &addr];
    args.extend_from_slice(extra);
    let mut child = ctxd(url, &args).stdout(Stdio::null()).spawn().unwrap();
    wait_serving(&addr, &mut child).await;
    let client = ContextServiceClient::new(channel(addr.parse().unwrap()).await);
    (child, client)
}

#[tokio::test]
async fn a_running_ctxd_keeps_serving_through_a_newer_releases_migration() {
    let url = empty_database_url("upgrades").await;
    let applied = run(&url, &["migrate"]);
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    let pool = PgPool::connect(&url).await.unwrap();
    let (child, mut client) = serve(&url, &["--no-migrate"]).await;
    create(&mut client, "upgrade", window(32_000, 4_000)).await;
    append(&mut client, "upgrade", vec![user("before the upgrade")])
        .await
        .unwrap();

    // The newer release migrates while this one serves.
    sqlx::raw_sql(EXPAND).execute(&pool).await.unwrap();
    append(&mut client, "upgrade", vec![user("during the upgrade")])
        .await
        .unwrap();
    let built = build(&mut client, "upgrade", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let said: Vec<&str> = built.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(said, ["before the upgrade", "during the upgrade"]);
    terminate(child).await;

    // Started again on the newer schema, with and without --no-migrate.
    for extra in [&["--no-migrate"][..], &[][..]] {
        let (child, mut client) = serve(&url, extra).await;
        append(&mut client, "upgrade", vec![user("after the upgrade")])
            .await
            .unwrap();
        terminate(child).await;
    }
    let messages: i64 = sqlx::query_scalar("select count(*) from messages")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(messages, 4);
    let dry = text(&run(&url, &["migrate", "--dry-run"]).stdout);
    assert!(
        dry.contains("a newer ctxd's): 99990001 future notes"),
        "{dry}"
    );

    // A contract this binary does not know of: it refuses to start, and says why.
    sqlx::raw_sql(CONTRACT).execute(&pool).await.unwrap();
    let refused = run(
        &url,
        &["serve", "--listen", &format!("127.0.0.1:{}", free_port())],
    );
    let said = text(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        said.contains(
            "migration 99990002 (contract 99990001 drop x) removes what this ctxd still uses"
        ),
        "{said}"
    );
    pool.close().await;
}
