//! Replays the real agent sessions in tests/data/swe-trajectories through the server as
//! an agent would (BuildMessages before each assistant message, AppendTurn with that
//! message's usage after) and compares each estimate with the provider's prompt_tokens.
//! Prints the table recorded in docs/benchmarks.md; asserts the anchored targets.
use std::io::Read;
use std::path::PathBuf;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use serde_json::Value;
use tonic::transport::Channel;

use crate::harness::*;

pub struct Recorded {
    pub system: String,
    pub messages: Vec<(pb::Message, Option<i64>)>,
}

pub fn corpus_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/swe-trajectories");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".traj.json.gz"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 20, "the corpus has 20 sessions");
    files
}

/// `tool_calls` is a JSON list, or in some recordings a Python-repr string of one.
fn tool_calls(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(list) => list.clone(),
        Value::String(text) => {
            let json = text
                .replace('\'', "\"")
                .replace("None", "null")
                .replace("True", "true")
                .replace("False", "false");
            serde_json::from_str(&json).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

pub fn load(path: &PathBuf) -> Recorded {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut system = String::new();
    let mut messages = Vec::new();
    for message in doc["messages"].as_array().unwrap() {
        let content = message["content"].as_str().unwrap_or_default().to_string();
        match message["role"].as_str().unwrap() {
            "system" => system = content,
            "user" => messages.push((user(&content), None)),
            "tool" => messages.push((
                result(message["tool_call_id"].as_str().unwrap(), &content),
                None,
            )),
            "assistant" => {
                let calls = tool_calls(&message["tool_calls"])
                    .into_iter()
                    .map(|call| pb::ToolCall {
                        id: call["id"].as_str().unwrap_or_default().into(),
                        name: call["function"]["name"].as_str().unwrap_or_default().into(),
                        arguments_json: call["function"]["arguments"]
                            .as_str()
                            .unwrap_or_default()
                            .into(),
                    })
                    .collect();
                let usage = message["extra"]["response"]["usage"]["prompt_tokens"].as_i64();
                messages.push((
                    pb::Message {
                        role: pb::Role::Assistant as i32,
                        content,
                        tool_calls: calls,
                        ..Default::default()
                    },
                    usage,
                ));
            }
            _ => {}
        }
    }
    Recorded { system, messages }
}

/// One build's estimate against the provider's count.
pub struct Sample {
    pub reported: i64,
    pub total: i64,
    pub tokenizer: i64,
    pub anchored: bool,
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
    for (message, usage) in &recorded.messages {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_estimates_track_provider_counts() {
    let pool = fresh_database("ctxd_corpus").await;
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let (mut heuristic, mut o200k, mut anchored, mut first) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (index, path) in corpus_files().iter().enumerate() {
        let recorded = load(path);
        let chars = replay(
            &mut client,
            &format!("h{index}"),
            &recorded,
            pb::Tokenizer::Heuristic,
        )
        .await;
        heuristic.extend(chars.iter().map(|s| error_pct(s.tokenizer, s.reported)));
        let exact = replay(
            &mut client,
            &format!("o{index}"),
            &recorded,
            pb::Tokenizer::O200kBase,
        )
        .await;
        o200k.extend(exact.iter().map(|s| error_pct(s.tokenizer, s.reported)));
        for sample in &exact {
            if sample.anchored {
                anchored.push(error_pct(sample.total, sample.reported));
            } else {
                first.push(error_pct(sample.total, sample.reported));
            }
        }
    }
    let rows = [
        ("heuristic chars/4", heuristic),
        ("o200k_base", o200k),
        ("anchored (o200k + usage)", anchored.clone()),
    ];
    println!("estimator | builds | median % | p95 % | max %");
    for (name, errors) in rows {
        let count = errors.len();
        let (median, p95, max) = summary(errors);
        println!("{name} | {count} | {median:.2} | {p95:.2} | {max:.2}");
    }
    println!(
        "builds without an anchor yet (first request of a session): {}",
        first.len()
    );
    let (median, _, max) = summary(anchored);
    assert!(median <= 1.0, "anchored median error {median:.2}% over 1%");
    assert!(max <= 3.0, "anchored max error {max:.2}% over 3%");
    server.stop().await;
}
