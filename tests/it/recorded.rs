//! The recorded agent sessions of tests/data/swe-trajectories, as proto messages.
//! Shared by the corpus replay test and the benchmarks (`#[path]`-included there).
use std::io::Read;
use std::path::PathBuf;

use ctxd::pb;
use serde_json::Value;

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
            "user" => messages.push((message_of(pb::Role::User, content), None)),
            "tool" => messages.push((
                pb::Message {
                    tool_call_id: message["tool_call_id"].as_str().unwrap().into(),
                    ..message_of(pb::Role::Tool, content)
                },
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

fn message_of(role: pb::Role, content: String) -> pb::Message {
    pb::Message {
        role: role as i32,
        content,
        ..Default::default()
    }
}
