//! A database that turns read-only under a running ctxd — as a demoted primary does, or
//! a standby a router still sends connections to — answers UNAVAILABLE (retry), never
//! INTERNAL, and once it takes writes again the next appends succeed: the connections
//! that met it are replaced. A plain PostgreSQL (ctxd's own launcher) made read-only for
//! every session with `default_transaction_read_only`, under a `ctxd serve` process.
use std::process::Stdio;

use ctxd::localpg::LocalPostgres;
use ctxd::pb;
use sqlx::PgPool;

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::{append, channel, create, user, window};
use crate::support::wait_until;

async fn set_read_only(admin: &PgPool, on: bool) {
    let mut conn = admin.acquire().await.unwrap();
    sqlx::query("set default_transaction_read_only = off")
        .execute(&mut *conn)
        .await
        .unwrap();
    let statement = format!("alter system set default_transaction_read_only = {on}");
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("select pg_reload_conf()")
        .execute(&mut *conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_database_turned_read_only_answers_unavailable_then_recovers() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-readonly")
        .tempdir_in("/tmp")
        .unwrap();
    let postgres = LocalPostgres::start(&dir.path().join("pg")).await.unwrap();
    let url = postgres.url();
    let admin = PgPool::connect(&url).await.unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["serve", "--listen", &addr])
        .env("DATABASE_URL", &url)
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    let mut client =
        pb::context_service_client::ContextServiceClient::new(channel(addr.parse().unwrap()).await);
    create(&mut client, "s", window(100_000, 4_000)).await;
    append(&mut client, "s", vec![user("before")])
        .await
        .unwrap();

    set_read_only(&admin, true).await;
    let first = std::sync::Arc::new(std::sync::Mutex::new(None));
    let refused = wait_until(|| {
        let mut client = client.clone();
        let first = first.clone();
        async move {
            let answer = append(&mut client, "s", vec![user("while read-only")]).await;
            let code = answer.err().map(|status| status.code());
            *first.lock().unwrap() = code;
            code.is_some()
        }
    })
    .await;
    assert!(refused, "appends kept succeeding on a read-only database");
    let mut codes: Vec<tonic::Code> = first.lock().unwrap().iter().copied().collect();
    for _ in 0..5 {
        let status = append(&mut client, "s", vec![user("while read-only")])
            .await
            .expect_err("a read-only database takes no append");
        codes.push(status.code());
    }
    assert!(
        codes.iter().all(|code| *code == tonic::Code::Unavailable),
        "{codes:?}"
    );

    set_read_only(&admin, false).await;
    let back = wait_until(|| {
        let mut client = client.clone();
        async move { append(&mut client, "s", vec![user("after")]).await.is_ok() }
    })
    .await;
    assert!(back, "appends did not succeed again");
    for _ in 0..5 {
        append(&mut client, "s", vec![user("after, again")])
            .await
            .expect("appends succeed on every connection");
    }
    terminate(child).await;
    admin.close().await;
    postgres.stop().await.unwrap();
}
