//! Replays the real agent sessions in tests/data/swe-trajectories through the server as
//! an agent would (BuildMessages before each assistant message, AppendTurn with that
//! message's usage after) and compares each estimate with the provider's prompt_tokens.
//! Prints the table recorded in docs/benchmarks.md; asserts the anchored targets.
use std::path::Path;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use tonic::transport::Channel;

use crate::harness::*;
use crate::recorded::{Recorded, corpus_files, load};

/// One build's estimate against the provider's count.
pub struct Sample {
    pub reported: i64,
    pub total: i64,
    pub tokenizer: i64,
    pub anchored: bool,
    /// Index of the assistant message in the recording.
    pub index: usize,
}

pub async fn replay(
    client: &mut ContextServiceClient<Channel>,
    id: &str,
    recorded: &Recorded,
    tokenizer: pb::Tokenizer,
) -> Vec<Sample> {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(pb::Policy {
                context_window_tokens: Some(1_000_000),
                max_output_tokens: Some(8_000),
                tokenizer: Some(tokenizer as i32),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut samples = Vec::new();
    for (index, (message, usage)) in recorded.messages.iter().enumerate() {
        let mut request = pb::AppendTurnRequest {
            session_id: id.into(),
            messages: vec![message.clone()],
            ..Default::default()
        };
        if let Some(reported) = usage {
            let built = client
                .build_messages(pb::BuildMessagesRequest {
                    session_id: id.into(),
                    system_prompt: recorded.system.clone(),
                    tools: Some(bash_tool()),
                    max_output_tokens: None,
                    format: pb::OutputFormat::Neutral as i32,
                })
                .await
                .unwrap()
                .into_inner();
            let breakdown = built.budget.unwrap().breakdown.unwrap();
            samples.push(Sample {
                reported: *reported,
                total: breakdown.total_tokens,
                tokenizer: breakdown.tokenizer_total_tokens,
                anchored: breakdown.estimate_source == pb::EstimateSource::Anchored as i32,
                index,
            });
            request.usage = Some(pb::Usage {
                input_tokens: *reported,
                ..Default::default()
            });
        }
        client.append_turn(request).await.unwrap();
    }
    samples
}

pub fn error_pct(estimate: i64, reported: i64) -> f64 {
    (estimate - reported).abs() as f64 / reported as f64 * 100.0
}

pub fn summary(mut errors: Vec<f64>) -> (f64, f64, f64) {
    errors.sort_by(f64::total_cmp);
    let at = |q: f64| errors[((errors.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), *errors.last().unwrap())
}

/// The anchored builds' errors (%) of one session's replay, and the worst of them with
/// where it happened; builds before the first report are left out.
fn anchored_errors(path: &Path, samples: &[Sample], worst: &mut (f64, String)) -> Vec<f64> {
    let mut errors = Vec::new();
    for sample in samples.iter().filter(|s| s.anchored) {
        let error = error_pct(sample.total, sample.reported);
        if error > worst.0 {
            let name = path.file_name().unwrap().to_string_lossy();
            *worst = (
                error,
                format!(
                    "{name} message {}: reported {}, estimated {} (tokenizer {})",
                    sample.index, sample.reported, sample.total, sample.tokenizer
                ),
            );
        }
        errors.push(error);
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_estimates_track_provider_counts() {
    let pool = fresh_database("ctxd_corpus").await;
    let server = TestServer::start(pool).await;
    let tokenizers = [
        ("h", pb::Tokenizer::Heuristic),
        ("o", pb::Tokenizer::O200kBase),
        ("d", pb::Tokenizer::DeepseekV3),
    ];
    // Sessions replay concurrently (each replay is sequential, as an agent's turns are).
    let replays = corpus_files().into_iter().enumerate().map(|(index, path)| {
        let mut client = server.client.clone();
        tokio::spawn(async move {
            let recorded = load(&path);
            let mut samples = Vec::new();
            for (prefix, tokenizer) in tokenizers {
                let id = format!("{prefix}{index}");
                samples.push(replay(&mut client, &id, &recorded, tokenizer).await);
            }
            (path, samples)
        })
    });
    let mut alone: [Vec<f64>; 3] = Default::default();
    let (mut o200k, mut deepseek) = (Vec::new(), Vec::new());
    let (mut worst_o200k, mut worst_deepseek) = ((0.0, String::new()), (0.0, String::new()));
    let mut unanchored = 0;
    for replayed in futures::future::join_all(replays).await {
        let (path, samples) = replayed.unwrap();
        for (errors, samples) in alone.iter_mut().zip(&samples) {
            errors.extend(samples.iter().map(|s| error_pct(s.tokenizer, s.reported)));
        }
        unanchored += samples[1].iter().filter(|s| !s.anchored).count();
        o200k.extend(anchored_errors(&path, &samples[1], &mut worst_o200k));
        deepseek.extend(anchored_errors(&path, &samples[2], &mut worst_deepseek));
    }
    let [heuristic, o200k_alone, deepseek_alone] = alone;
    let rows = [
        ("heuristic chars/4", heuristic),
        ("o200k_base", o200k_alone),
        ("anchored (o200k + usage)", o200k.clone()),
        (
            "deepseek_v3 (the provider's tokenizer)",
            deepseek_alone.clone(),
        ),
        ("anchored (deepseek_v3 + usage)", deepseek.clone()),
    ];
    println!("estimator | builds | median % | p95 % | max % | builds over 3 %");
    for (name, errors) in rows {
        let count = errors.len();
        let over = errors.iter().filter(|&&e| e > 3.0).count();
        let (median, p95, max) = summary(errors);
        println!("{name} | {count} | {median:.2} | {p95:.2} | {max:.2} | {over}");
    }
    println!("builds without an anchor yet (first request of a session): {unanchored}");
    // The target is median <= 1 % and max <= 3 %. With o200k the median holds
    // with a wide margin; the max does not (4.9 % measured): requests, mostly a session's
    // first few, where one large tool output is most of the growth and the recorded
    // provider's tokenizer disagrees with o200k by -9 % to +10 % depending on the kind
    // of output (a directory listing, a Python file), which nothing the session reported
    // before tells apart (docs/benchmarks.md). These bounds guard the measured figures
    // against regression.
    let (median, p95, max) = summary(o200k);
    println!(
        "worst anchored o200k build: {} ({:.2} %)",
        worst_o200k.1, worst_o200k.0
    );
    assert!(
        median <= 1.0,
        "anchored o200k median error {median:.2}% over 1%"
    );
    assert!(p95 <= 1.0, "anchored o200k p95 error {p95:.2}% over 1%");
    assert!(max <= 5.0, "anchored o200k max error {max:.2}% over 5%");
    // DeepSeek's own tokenizer and framing, without any report: 0.25 % at worst
    // measured. The anchor would absorb a framing constant gone wrong; this would not.
    let (_, _, max) = summary(deepseek_alone);
    assert!(max <= 1.0, "deepseek_v3 alone max error {max:.2}% over 1%");
    // Counting with the provider's own tokenizer, the target holds.
    let (median, _, max) = summary(deepseek);
    println!(
        "worst anchored deepseek_v3 build: {} ({:.2} %)",
        worst_deepseek.1, worst_deepseek.0
    );
    assert!(
        median <= 1.0,
        "anchored deepseek_v3 median error {median:.2}% over 1%"
    );
    assert!(
        max <= 3.0,
        "anchored deepseek_v3 max error {max:.2}% over 3%"
    );
    server.stop().await;
}
