//! Replays every recorded session through a 16 000-token window with the code behind
//! `ctxd replay`: BuildMessages before each assistant message, AppendTurn after. The
//! sessions grow far past the window, so every layer of compaction runs. Asserts the
//! promises (never over budget, never an orphaned tool pair, the prompt cache kept on at
//! least 95 % of builds) and prints the table recorded in docs/benchmarks.md.
use ctxd::replay::{Options, Outcome, replay_one, table};

use crate::harness::*;
use crate::recorded::{corpus_files, load};

fn options(addr: std::net::SocketAddr, window: i64, report_usage: bool) -> Options {
    Options {
        addr: addr.to_string(),
        tls: Default::default(),
        api_key: None,
        window,
        report_usage,
        tokenizer: None,
        progress: false,
        keep: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_in_a_16k_window_never_over_budget_never_orphaned_cache_kept() {
    let pool = fresh_database("ctxd_small_window").await;
    let server = TestServer::start(pool).await;
    let options = options(server.addr, 16_000, false);
    let replays = corpus_files().into_iter().enumerate().map(|(index, path)| {
        let mut client = server.client.clone();
        let options = options.clone();
        tokio::spawn(async move {
            let recorded = load(&path);
            let name = path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".traj.json.gz")
                .to_string();
            replay_one(
                &mut client,
                &options,
                &recorded,
                name,
                format!("w{index}"),
                |_| {},
            )
            .await
            .unwrap()
        })
    });
    let mut outcomes: Vec<Outcome> = Vec::new();
    for outcome in futures::future::join_all(replays).await {
        outcomes.push(outcome.unwrap());
    }
    print!("{}", table(&outcomes, 16_000));
    let builds: usize = outcomes.iter().map(|o| o.builds - 1).sum();
    let extending: usize = outcomes.iter().map(|o| o.extending).sum();
    let stable = extending as f64 * 100.0 / builds as f64;
    // (kept, of) per kind: paths, commands, identifiers.
    let mut kinds = [(0i64, 0i64); 3];
    for outcome in &outcomes {
        let view = server
            .client
            .clone()
            .get_session(ctxd::pb::GetSessionRequest {
                session_id: outcome.session_id.clone(),
                include_view: true,
            })
            .await
            .unwrap()
            .into_inner();
        for s in &view.summaries {
            for (kind, (all, lost)) in kinds.iter_mut().zip([
                (s.paths, s.paths_lost),
                (s.commands, s.commands_lost),
                (s.identifiers, s.identifiers_lost),
            ]) {
                kind.0 += all - lost;
                kind.1 += all;
            }
            assert_eq!(s.facts, s.paths + s.commands + s.identifiers);
        }
    }
    let percent = |(kept, of): (i64, i64)| kept as f64 * 100.0 / of.max(1) as f64;
    let [paths, commands, identifiers] = kinds;
    let all = (
        paths.0 + commands.0 + identifiers.0,
        paths.1 + commands.1 + identifiers.1,
    );
    println!(
        "retention: active summaries mention {}/{} file paths ({:.1} %), {}/{} commands ({:.1} %), {}/{} identifiers ({:.1} %) of what they cover; {:.1} % in all",
        paths.0,
        paths.1,
        percent(paths),
        commands.0,
        commands.1,
        percent(commands),
        identifiers.0,
        identifiers.1,
        percent(identifiers),
        percent(all)
    );
    assert_eq!(
        outcomes.iter().map(|o| o.orphans).sum::<usize>(),
        0,
        "orphaned tool pairs"
    );
    assert_eq!(
        outcomes.iter().map(|o| o.over_budget).sum::<usize>(),
        0,
        "builds over budget"
    );
    assert!(stable >= 95.0, "cache-stable builds {stable:.1} % < 95 %");
    server.stop().await;
}

/// `ctxd replay` end to end on two files with the usage reported and a window that holds
/// everything: the estimate error column is filled, nothing is compacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_reports_per_session_and_overall() {
    let pool = fresh_database("ctxd_replay").await;
    let server = TestServer::start(pool).await;
    let files: Vec<_> = corpus_files().into_iter().take(2).collect();
    let report = ctxd::replay::run(&files, &options(server.addr, 1_000_000, true))
        .await
        .unwrap();
    let rows: Vec<&str> = report
        .lines()
        .filter(|line| line.starts_with("django"))
        .collect();
    assert_eq!(rows.len(), 2, "{report}");
    let total = report
        .lines()
        .find(|line| line.starts_with("all |"))
        .unwrap();
    let cells: Vec<&str> = total.split('|').map(str::trim).collect();
    assert_eq!(cells[10], "0", "no orphans: {total}");
    assert_eq!(cells[11], "0", "none over budget: {total}");
    assert_ne!(cells[8], "n/a", "the estimate error is measured: {total}");
    assert_eq!(
        cells[9], "100.0",
        "nothing compacted, every build extends: {total}"
    );
    server.stop().await;
}
