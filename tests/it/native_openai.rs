//! AppendNative with OpenAI bodies through a real server: recorded Chat Completions
//! replies and Responses replies are appended as the provider returned them, their
//! usage anchors the estimate, the session builds in both OpenAI formats with the reply
//! sent back as the provider documents it, and a malformed body is refused naming its
//! JSON path with nothing written.
use std::io::Read;
use std::path::PathBuf;

use ctxd::pb;
use serde_json::{Value, json};
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;
use crate::recorded::corpus_files;

/// A recorded reply (its ChatCompletion) and the tool results that answered it, as Chat
/// messages.
struct Step {
    response: Value,
    items: Value,
}

/// The first recorded session's task and its first replies.
fn recorded() -> (String, Vec<Step>) {
    let file = std::fs::File::open(&corpus_files()[0]).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let session: Value = serde_json::from_str(&text).unwrap();
    let messages = session["messages"].as_array().unwrap();
    let task = messages[1]["content"].as_str().unwrap().to_string();
    let mut steps = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message["role"] != "assistant" {
            continue;
        }
        let items = messages[index + 1..]
            .iter()
            .take_while(|next| next["role"] == "tool")
            .map(|tool| {
                json!({"role": "tool", "tool_call_id": tool["tool_call_id"],
                    "content": tool["content"]})
            })
            .collect();
        steps.push(Step {
            response: message["extra"]["response"].clone(),
            items: Value::Array(items),
        });
    }
    (task, steps)
}

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/native")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn list(body: &Value, key: &str) -> Vec<Value> {
    body[key].as_array().unwrap().clone()
}

/// A recorded reply's message as Chat Completions takes it back: role, content and
/// tool calls (the recording's extra fields, `index` and nulls, are not part of it).
fn sent_back(response: &Value) -> Value {
    let message = &response["choices"][0]["message"];
    let calls: Vec<Value> = message["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| {
            json!({"id": call["id"], "type": "function", "function": {
                "name": call["function"]["name"], "arguments": call["function"]["arguments"]}})
        })
        .collect();
    json!({"role": "assistant", "content": message["content"], "tool_calls": calls})
}

#[sqlx::test]
async fn recorded_chat_completions_append_and_build_in_both_formats(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "chat", window(200_000, 8_000)).await;
    let (task, steps) = recorded();
    append(&mut client, "chat", vec![user(&task)])
        .await
        .unwrap();

    for step in &steps[..3] {
        let appended = append_native(
            &mut client,
            "chat",
            pb::OutputFormat::OpenaiChat,
            &step.response.to_string(),
            &step.items.to_string(),
        )
        .await
        .unwrap();
        assert_eq!(
            appended.seqs.len(),
            1 + step.items.as_array().unwrap().len()
        );
    }
    let session = session(&mut client, "chat").await;
    let usage = &steps[2].response["usage"];
    let estimator = session.estimator.unwrap();
    assert_eq!(
        estimator.anchor_input_tokens,
        usage["prompt_tokens"].as_i64().unwrap(),
        "the last reply's usage anchors the estimate"
    );
    assert_eq!(estimator.samples, 3);
    let total = session.usage_total.unwrap();
    let sum = |key: &str| -> i64 {
        steps[..3]
            .iter()
            .map(|step| step.response["usage"][key].as_i64().unwrap())
            .sum()
    };
    assert_eq!(total.input_tokens, sum("prompt_tokens"));
    assert_eq!(total.output_tokens, sum("completion_tokens"));

    // OPENAI_CHAT: each reply is sent back as Chat takes it, its results after it.
    let chat = json_body(&mut client, "chat", pb::OutputFormat::OpenaiChat).await;
    let messages = list(&chat, "messages");
    let mut expected = vec![
        json!({"role": "system", "content": "You are a careful coding agent."}),
        json!({"role": "user", "content": task}),
    ];
    for step in &steps[..3] {
        expected.push(sent_back(&step.response));
        expected.extend(step.items.as_array().unwrap().iter().cloned());
    }
    assert_eq!(messages, expected);

    // OPENAI_RESPONSES: the same calls as function_call items, answered by call id.
    let responses = json_body(&mut client, "chat", pb::OutputFormat::OpenaiResponses).await;
    assert_eq!(responses["instructions"], "You are a careful coding agent.");
    let input = list(&responses, "input");
    let call = &steps[0].response["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": call["id"], "name": "bash",
            "arguments": call["function"]["arguments"]})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": call["id"],
            "output": steps[0].items[0]["content"]})
    );

    // The round trip: the next reply extends the body; what was sent is its prefix.
    append_native(
        &mut client,
        "chat",
        pb::OutputFormat::OpenaiChat,
        &steps[3].response.to_string(),
        &steps[3].items.to_string(),
    )
    .await
    .unwrap();
    let next = list(
        &json_body(&mut client, "chat", pb::OutputFormat::OpenaiChat).await,
        "messages",
    );
    assert_eq!(next[..messages.len()], messages[..]);
    let mut tail = vec![sent_back(&steps[3].response)];
    tail.extend(steps[3].items.as_array().unwrap().iter().cloned());
    assert_eq!(next[messages.len()..], tail[..]);
    server.stop().await;
}

#[sqlx::test]
async fn responses_replies_round_trip_with_their_reasoning(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "resp", window(200_000, 8_000)).await;
    append(
        &mut client,
        "resp",
        vec![user("Weather in Paris and Bogotá?")],
    )
    .await
    .unwrap();
    let first = list(
        &json_body(&mut client, "resp", pb::OutputFormat::OpenaiResponses).await,
        "input",
    );

    let reply: Value =
        serde_json::from_str(&fixture("openai_response_function_calls.json")).unwrap();
    let outputs = json!([
        {"type": "function_call_output", "call_id": "call_12345xyz", "output": "14°C"},
        {"type": "function_call_output", "call_id": "call_67890abc", "output": "19°C"},
    ]);
    append_native(
        &mut client,
        "resp",
        pb::OutputFormat::OpenaiResponses,
        &reply.to_string(),
        &outputs.to_string(),
    )
    .await
    .unwrap();
    let estimator = session(&mut client, "resp").await.estimator.unwrap();
    assert_eq!(estimator.anchor_input_tokens, 1024);

    let second = list(
        &json_body(&mut client, "resp", pb::OutputFormat::OpenaiResponses).await,
        "input",
    );
    assert_eq!(second[..first.len()], first[..]);
    // `input += response.output`, less the item ids and statuses ctxd does not keep.
    let reasoning = &reply["output"][0];
    let mut tail = vec![json!({"type": "reasoning", "id": reasoning["id"],
        "summary": reasoning["summary"], "encrypted_content": reasoning["encrypted_content"]})];
    for call in &reply["output"].as_array().unwrap()[1..] {
        tail.push(json!({"type": "function_call", "call_id": call["call_id"],
            "name": call["name"], "arguments": call["arguments"]}));
    }
    tail.extend(outputs.as_array().unwrap().iter().cloned());
    assert_eq!(second[first.len()..], tail[..]);

    // The same session in OPENAI_CHAT: the summary is the reasoning_content.
    let chat = list(
        &json_body(&mut client, "resp", pb::OutputFormat::OpenaiChat).await,
        "messages",
    );
    assert_eq!(
        chat[2]["reasoning_content"],
        reasoning["summary"][0]["text"]
    );
    assert_eq!(chat[3]["tool_call_id"], "call_12345xyz");

    // A text reply and a user message with an image extend it again.
    let text_reply = fixture("openai_response_text.json");
    let user_items = json!([{"role": "user", "content": [
        {"type": "input_text", "text": "And this?"},
        {"type": "input_image", "image_url": "data:image/png;base64,QUJD", "detail": "auto"}]}]);
    append_native(
        &mut client,
        "resp",
        pb::OutputFormat::OpenaiResponses,
        &text_reply,
        &user_items.to_string(),
    )
    .await
    .unwrap();
    let third = list(
        &json_body(&mut client, "resp", pb::OutputFormat::OpenaiResponses).await,
        "input",
    );
    assert_eq!(third[..second.len()], second[..]);
    let text: Value = serde_json::from_str(&text_reply).unwrap();
    assert_eq!(
        third[second.len()],
        json!({"type": "message", "role": "assistant",
            "content": text["output"][0]["content"][0]["text"]})
    );
    assert_eq!(third[second.len() + 1], {
        let mut item = user_items[0].clone();
        item["type"] = json!("message");
        item
    });
    server.stop().await;
}

#[sqlx::test]
async fn malformed_bodies_name_the_json_path_and_write_nothing(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "bad", window(200_000, 8_000)).await;
    append(&mut client, "bad", vec![user("Go.")]).await.unwrap();
    let before = session(&mut client, "bad").await;

    let chat = pb::OutputFormat::OpenaiChat;
    let responses = pb::OutputFormat::OpenaiResponses;
    let a_call = json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "bash", "arguments": "{}"}}]}}]})
    .to_string();
    let huge = json!([{"role": "user", "content": "x".repeat(10 * 1024 * 1024)}]).to_string();
    let cases = [
        (
            chat,
            "{\"choices\": [".to_string(),
            String::new(),
            "response_json: $",
        ),
        (
            chat,
            json!({"choices": [{"message": {"role": "assistant", "content": 5}}]}).to_string(),
            String::new(),
            "response_json: $.choices[0].message.content",
        ),
        (
            chat,
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}]})
            .to_string(),
            String::new(),
            "response_json: $.choices[0].message.tool_calls[0].id",
        ),
        (
            chat,
            String::new(),
            json!([{"role": "tool", "tool_call_id": "nope", "content": "x"}]).to_string(),
            "items_json: $[0].tool_call_id",
        ),
        (
            // The reply is fine, the second item is not: neither is written.
            chat,
            a_call.clone(),
            json!([{"role": "tool", "tool_call_id": "call_1", "content": "ok"},
                {"role": "tool", "content": "x"}])
            .to_string(),
            "items_json: $[1].tool_call_id",
        ),
        (
            chat,
            a_call.clone(),
            json!([{"role": "tool", "tool_call_id": "call_1", "content": "ok"},
                {"role": "tool", "tool_call_id": "call_1", "content": "again"}])
            .to_string(),
            "items_json: $[1].tool_call_id",
        ),
        (
            responses,
            String::new(),
            json!([{"type": "function_call_output", "call_id": "nope", "output": "x"}]).to_string(),
            "items_json: $[0].call_id",
        ),
        (
            responses,
            json!({"object": "response", "output": [{"type": "function_call",
                "name": "bash", "arguments": "{}"}]})
            .to_string(),
            String::new(),
            "response_json: $.output[0].call_id",
        ),
        (chat, String::new(), huge, "items_json: $"),
    ];
    for (format, response, items, field) in cases {
        let status = append_native(&mut client, "bad", format, &response, &items)
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{field}: {status:?}");
        assert_eq!(violated_fields(&status), [field], "{}", status.message());
        assert!(
            status.message().len() < 1_000,
            "{field}: the echo is clipped"
        );
        let after = session(&mut client, "bad").await;
        assert_eq!(after.version, before.version, "{field}: nothing is written");
        assert_eq!(after.message_count, before.message_count);
    }
    server.stop().await;
}
