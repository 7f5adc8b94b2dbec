//! What the integration tests share beyond the server harness.

use std::future::Future;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Polls `condition` until it holds or 30 s pass, for what no event announces (work a
/// server finishes after answering); whether it came true.
pub async fn wait_until<F, Fut>(mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if condition().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The newest PostgreSQL server installation's binaries.
pub fn pg_bin() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL server binaries in /usr/lib/postgresql")
        .map(|entry| entry.unwrap().path().join("bin"))
        .filter(|dir| dir.join("postgres").exists())
        .collect();
    dirs.sort();
    dirs.pop()
        .expect("a PostgreSQL server in /usr/lib/postgresql/*/bin")
}

/// The user PostgreSQL runs as when the tests run as root (it refuses root).
pub fn postgres_user() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let output = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .unwrap();
        String::from_utf8(output.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (id("-u"), id("-g"))
}
