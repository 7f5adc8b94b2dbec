//! A rolling upgrade from the previous release's binary: two replicas of it serve eight
//! clients appending with idempotency keys (the HA harness's load) on a private
//! PostgreSQL; this binary's `migrate` applies its new migrations under them; then each
//! replica in turn is stopped (SIGTERM) and replaced by this binary with `--no-migrate`
//! on the same address. Afterwards every acknowledged append is in its session exactly
//! once, and no call was answered INTERNAL.
//!
//! Ignored in the suite: it needs the previous binary, which `scripts/rolling-upgrade`
//! builds from a git revision and passes as CTXD_PREVIOUS_BIN.
use std::process::{Child, Command, Stdio};

use ctxd::localpg::LocalPostgres;

use crate::binary::{free_port, terminate, wait_serving};
use crate::ha::load::{Load, check};

fn serve(binary: &str, addr: &str, url: &str, migrate: bool) -> Child {
    let mut command = Command::new(binary);
    command.args(["serve", "--listen", addr]);
    if !migrate {
        command.arg("--no-migrate");
    }
    command
        .env("DATABASE_URL", url)
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn ctxd(binary: &str, url: &str, args: &[&str]) -> String {
    let output = Command::new(binary)
        .args(args)
        .env("DATABASE_URL", url)
        .env("CTXD_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{binary} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
#[ignore = "needs the previous release's binary: scripts/rolling-upgrade"]
async fn a_rolling_upgrade_from_the_previous_binary_loses_nothing() {
    let previous = std::env::var("CTXD_PREVIOUS_BIN").expect("CTXD_PREVIOUS_BIN");
    let current = env!("CARGO_BIN_EXE_ctxd");
    let dir = tempfile::Builder::new()
        .prefix("ctxd-rolling")
        .tempdir_in("/tmp")
        .unwrap();
    let postgres = LocalPostgres::start(&dir.path().join("pg")).await.unwrap();
    let url = postgres.url();
    let addrs: Vec<String> = (0..2)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let mut replicas: Vec<Child> = addrs
        .iter()
        .map(|addr| serve(&previous, addr, &url, true))
        .collect();
    for (addr, child) in addrs.iter().zip(replicas.iter_mut()) {
        wait_serving(addr, child).await;
    }
    let load = Load::start(&addrs, 8).await;
    load.wait_acks(200).await;

    println!("the new release's migrations, applied under the previous release's replicas:");
    println!("{}", ctxd(current, &url, &["migrate", "--dry-run"]));
    ctxd(current, &url, &["migrate"]);
    load.wait_acks(200).await;
    for addr in &addrs {
        terminate(replicas.remove(0)).await;
        let mut upgraded = serve(current, addr, &url, false);
        wait_serving(addr, &mut upgraded).await;
        replicas.push(upgraded);
        load.wait_acks(200).await;
    }

    let record = load.stop().await;
    let acknowledged: usize = record.acknowledged.iter().map(Vec::len).sum();
    let (lost, doubled) = check(&addrs[0], &record).await;
    let lost = lost.len();
    println!(
        "acknowledged {acknowledged}, lost {lost}, doubled {doubled}, INTERNAL {}",
        record.internal
    );
    assert_eq!((lost, doubled, record.internal), (0, 0, 0));
    for child in replicas {
        terminate(child).await;
    }
    postgres.stop().await.unwrap();
}
