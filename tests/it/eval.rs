//! `ctxd eval` against a real server: every strategy gets a row with a request before
//! each recorded assistant message, ctxd's requests are never over budget and never
//! orphan a tool pair, Search finds what they lost, and the picture is written with one point per strategy.
use std::path::PathBuf;

/// The cells of the table row of `strategy` in `window`.
fn row<'a>(table: &'a str, strategy: &str, window: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|line| line.split('|').map(str::trim).collect::<Vec<_>>())
        .find(|cells| cells.len() > 3 && cells[1] == strategy && cells[2] == window)
        .unwrap_or_else(|| panic!("no row for {strategy} {window} in:\n{table}"))
}

#[sqlx::test]
async fn eval_measures_every_strategy_and_ctxd_stays_in_budget_without_orphans(pool: sqlx::PgPool) {
    let server = crate::harness::TestServer::start(pool).await;
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/swe-trajectories");
    let out = std::env::temp_dir().join(format!("ctxd-eval-{}", uuid::Uuid::new_v4().simple()));
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args([
            "eval",
            "--addr",
            &server.addr.to_string(),
            "--sessions",
            "1",
        ])
        .args(["--windows", "16000", "--corpus"])
        .arg(&corpus)
        .arg("--out")
        .arg(&out)
        .output()
        .await
        .unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{table}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The first session by name has 42 assistant messages: 42 requests each.
    for strategy in [
        "ctxd",
        "opencode",
        "codex",
        "deepagents",
        "seahorse",
        "context-editing",
    ] {
        let cells = row(&table, strategy, "16000");
        assert_eq!(cells[3], "42", "{strategy} requests: {cells:?}");
        let billed: f64 = cells[4].parse().unwrap();
        assert!(billed > 0.0, "{strategy} billed: {cells:?}");
        let retention: f64 = cells[11].parse().unwrap();
        assert!((0.0..=100.0).contains(&retention), "{cells:?}");
    }
    let ctxd = row(&table, "ctxd", "16000");
    assert_eq!(ctxd[9], "0", "ctxd over budget: {ctxd:?}");
    assert_eq!(ctxd[10], "0", "ctxd orphans: {ctxd:?}");
    // ctxd compacts this session in a 16 000 window: its summarizer read something.
    assert!(!ctxd[5].starts_with("0.000"), "{ctxd:?}");
    // Search found the source of some fact ctxd's last request no longer showed.
    let recall = table
        .lines()
        .find(|line| line.starts_with("Search recall, window 16000: of "))
        .unwrap_or_else(|| panic!("no Search recall in:\n{table}"));
    assert!(
        !recall.contains("found the source message of 0 "),
        "{recall}"
    );
    let written = std::fs::read_to_string(out.join("compaction-eval.md")).unwrap();
    assert_eq!(written, table);
    let svg = std::fs::read_to_string(out.join("compaction-eval.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    // Six points and six legend markers.
    assert_eq!(svg.matches("<circle").count(), 6 + 6 + 1, "{svg}");
    std::fs::remove_dir_all(&out).unwrap();
    server.stop().await;
}
