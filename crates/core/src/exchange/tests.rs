use serde_json::{Value, json};

use super::stream::Assembler;
use super::*;
use crate::format::Format;
use crate::ingest;
use crate::message::Role;

#[test]
fn split_keeps_everything_but_the_history_and_merge_puts_the_built_one_back() {
    let body = json!({
        "model": "claude-x", "max_tokens": 512, "stream": true, "temperature": 0.2,
        "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hi"}],
    });
    let request = split(Format::AnthropicMessages, &body.to_string(), false).unwrap();
    assert!(request.stream);
    assert_eq!(request.max_output_tokens, Some(512));
    assert_eq!(request.system_text, "be brief");
    assert!(request.counted_text.contains("\"bash\""));
    assert!(!request.rest.contains_key("messages"));
    let built = json!({"system": "ignored", "messages": [{"role": "user", "content": "built"}]});
    let merged: Value =
        serde_json::from_str(&merge(&request, &built.to_string(), None, None)).unwrap();
    assert_eq!(
        merged["messages"],
        json!([{"role": "user", "content": "built"}])
    );
    assert_eq!(merged["system"], body["system"]);
    assert_eq!(merged["temperature"], json!(0.2));
    let with_block: Value = serde_json::from_str(&merge(
        &request,
        &built.to_string(),
        Some("summaries"),
        None,
    ))
    .unwrap();
    assert_eq!(with_block["system"][0], body["system"][0]);
    assert_eq!(with_block["system"][1]["text"], json!("summaries"));
}

#[test]
fn openai_chat_system_messages_lead_the_merged_history_as_they_came() {
    let body = json!({"model": "m", "messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]});
    let request = split(Format::OpenAiChat, &body.to_string(), false).unwrap();
    assert_eq!(request.system_text, "sys");
    assert_eq!(
        request.history,
        json!([{"role": "user", "content": "task"}]).to_string()
    );
    let built = json!({"messages": [{"role": "user", "content": "task"}]});
    let merged: Value =
        serde_json::from_str(&merge(&request, &built.to_string(), None, None)).unwrap();
    assert_eq!(merged["messages"], body["messages"]);
}

#[test]
fn split_names_what_is_wrong() {
    let error = split(Format::OpenAiChat, "{", false).unwrap_err();
    assert_eq!(error.path, "$");
    let error = split(Format::Gemini, "{}", false).unwrap_err();
    assert_eq!(error.path, "$.contents");
    let easy = split(Format::OpenAiResponses, r#"{"input": "hello"}"#, false).unwrap();
    assert_eq!(
        ingest::items(Format::OpenAiResponses, &easy.history)
            .unwrap()
            .messages
            .len(),
        1
    );
}

#[test]
fn a_response_and_its_replay_have_one_fingerprint() {
    let response = json!({"type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "listing"},
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"b": 1, "a": "ls"}}]});
    let replay = json!([{"role": "assistant", "content": [
        {"type": "text", "text": "listing", "cache_control": {"type": "ephemeral"}},
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"a": "ls", "b": 1}}]}]);
    let a = ingest::response(Format::AnthropicMessages, &response.to_string()).unwrap();
    let b = ingest::items(Format::AnthropicMessages, &replay.to_string()).unwrap();
    assert_eq!(fingerprint(&a.messages[0]), fingerprint(&b.messages[0]));
    let mut edited = b.messages[0].clone();
    edited.content.push('!');
    assert_ne!(fingerprint(&a.messages[0]), fingerprint(&edited));
}

#[test]
fn reconcile_tells_an_extension_from_a_rewrite() {
    let fp = |n: u8| [n; 32];
    let stored = [fp(1), fp(2), fp(3)];
    assert_eq!(
        reconcile(&stored, &[fp(1), fp(2), fp(3), fp(4)]),
        Reconciled::Extends { new_from: 3 }
    );
    assert_eq!(
        reconcile(&stored, &stored),
        Reconciled::Extends { new_from: 3 }
    );
    assert_eq!(
        reconcile(&stored, &[fp(1), fp(9), fp(3)]),
        Reconciled::Diverges { at: 1 }
    );
    // A retry of an earlier request stops short of what is stored: another branch.
    assert_eq!(
        reconcile(&stored, &[fp(1), fp(2)]),
        Reconciled::Diverges { at: 2 }
    );
    assert_ne!(chain(&stored[..2]), chain(&stored));
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(event, data)| format!("event: {event}\r\ndata: {data}\r\n\r\n"))
        .collect()
}

/// Feeds `stream` in pieces of `size` bytes (splitting lines and characters).
fn assemble(provider: Format, stream: &str, size: usize) -> Option<String> {
    let mut assembler = Assembler::new(provider);
    for piece in stream.as_bytes().chunks(size) {
        assembler.feed(piece);
    }
    assembler.finish()
}

#[test]
fn an_anthropic_stream_assembles_into_the_message_it_streamed() {
    let stream = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 90, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me lé"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ook"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"ls\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    for size in [1, 7, stream.len()] {
        let body = assemble(Format::AnthropicMessages, &stream, size).unwrap();
        let read = ingest::response(Format::AnthropicMessages, &body).unwrap();
        let message = &read.messages[0];
        assert_eq!(message.content, "Let me léook");
        assert_eq!(message.tool_calls[0].arguments, r#"{"command":"ls"}"#);
        let usage = read.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (90, 12));
    }
}

#[test]
fn an_openai_chat_stream_joins_its_deltas() {
    let chunks = [
        json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}),
        json!({"id": "c", "choices": [{"index": 0, "delta": {"content": "lo", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\""}}]}}]}),
        json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": \"ls\"}"}}]}}]}),
        json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}),
    ];
    let mut stream: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    stream.push_str("data: [DONE]\n\n");
    let body = assemble(Format::OpenAiChat, &stream, 5).unwrap();
    let read = ingest::response(Format::OpenAiChat, &body).unwrap();
    assert_eq!(read.messages[0].content, "Hello");
    assert_eq!(read.messages[0].tool_calls[0].id, "call_1");
    assert_eq!(
        read.messages[0].tool_calls[0].arguments,
        r#"{"command": "ls"}"#
    );
    assert_eq!(read.usage.unwrap().input_tokens, 50);
}

#[test]
fn a_responses_stream_gives_its_completed_response_and_gemini_its_parts() {
    let response = json!({"id": "r", "object": "response", "status": "completed", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]});
    let stream = sse(&[
        (
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "delta": "done"}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": response}),
        ),
    ]);
    let body = assemble(Format::OpenAiResponses, &stream, 3).unwrap();
    let read = ingest::response(Format::OpenAiResponses, &body).unwrap();
    assert_eq!(read.messages[0].content, "done");

    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Run"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ning"}, {"functionCall": {"name": "bash", "args": {"command": "ls"}}}]}}], "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 4}}),
    ];
    let stream: String = chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect();
    let body = assemble(Format::Gemini, &stream, 4).unwrap();
    let read = ingest::response(Format::Gemini, &body).unwrap();
    assert_eq!(read.messages[0].role, Role::Assistant);
    assert_eq!(read.messages[0].content, "Running");
    assert_eq!(read.messages[0].tool_calls[0].name, "bash");
    assert_eq!(read.usage.unwrap().input_tokens, 40);
}

#[test]
fn errors_take_each_providers_shape() {
    let anthropic: Value = serde_json::from_str(&errors::body(
        Some(Format::AnthropicMessages),
        errors::Kind::InvalidRequest,
        "bad",
    ))
    .unwrap();
    assert_eq!(anthropic["type"], json!("error"));
    assert_eq!(anthropic["error"]["type"], json!("invalid_request_error"));
    let gemini: Value = serde_json::from_str(&errors::body(
        Some(Format::Gemini),
        errors::Kind::NotFound,
        "x",
    ))
    .unwrap();
    assert_eq!(gemini["error"]["status"], json!("NOT_FOUND"));
    let openai: Value =
        serde_json::from_str(&errors::body(None, errors::Kind::Authentication, "x")).unwrap();
    assert_eq!(openai["error"]["type"], json!("authentication_error"));
    assert!(errors::is_context_length(
        400,
        r#"{"error":{"code":"context_length_exceeded"}}"#
    ));
    assert!(!errors::is_context_length(500, "prompt is too long"));
}

/// The history field of a body `render::body` wrote for `messages`.
fn rendered(provider: Format, messages: &[crate::message::Message]) -> Value {
    let body = crate::render::body(provider, "", messages, &[], 1000);
    serde_json::from_str::<Value>(&body).unwrap()[history_field(provider)].clone()
}

#[test]
fn anthropic_blocks_ctxd_does_not_model_go_back_as_they_came() {
    let search = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}});
    let results = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://a.example", "title": "A", "encrypted_content": "xyz"}]});
    let text = json!({"type": "text", "text": "Found it."});
    let response =
        json!({"type": "message", "role": "assistant", "content": [search, results, text]});
    let read = ingest::response(Format::AnthropicMessages, &response.to_string()).unwrap();
    let document = json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}});
    let user =
        json!([{"role": "user", "content": [document, {"type": "text", "text": "Read this."}]}]);
    let items = ingest::items(Format::AnthropicMessages, &user.to_string()).unwrap();
    let messages = [items.messages[0].clone(), read.messages[0].clone()];
    let sent = rendered(Format::AnthropicMessages, &messages);
    assert_eq!(
        sent[0]["content"],
        json!([document, {"type": "text", "text": "Read this."}])
    );
    assert_eq!(sent[1]["content"], json!([search, results, text]));
    // Counted like any other content, and a note for another format.
    let counter = crate::policy::Policy::default().counter();
    assert!(counter.message(&read.messages[0]) > counter.text("Found it.") + 20);
    let chat = rendered(Format::OpenAiChat, &messages).to_string();
    assert!(
        chat.contains("[anthropic web_search_tool_result kept by ctxd]"),
        "{chat}"
    );
}

#[test]
fn responses_custom_tool_calls_and_hosted_items_go_back_as_they_came() {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch";
    let search = json!({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "rust"}});
    let call = json!({"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": patch});
    let output = json!({"type": "custom_tool_call_output", "call_id": "call_1", "output": "Done!"});
    let history = json!([{"role": "user", "content": "Add a.txt."}, search, call, output]);
    let read = ingest::items(Format::OpenAiResponses, &history.to_string()).unwrap();
    assert_eq!(read.messages.len(), 3);
    assert_eq!(read.messages[1].tool_calls[0].name, "apply_patch");
    let sent = rendered(Format::OpenAiResponses, &read.messages);
    assert_eq!(sent[1], search);
    assert_eq!(sent[2], call);
    assert_eq!(sent[3], output);
    // Another format sees a function call and its result, paired.
    let chat = rendered(Format::OpenAiChat, &read.messages);
    assert_eq!(chat[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(chat[2]["tool_call_id"], "call_1");
}

#[test]
fn a_client_that_caches_its_history_gets_a_breakpoint_at_the_end_of_the_built_one() {
    let body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "task", "cache_control": {"type": "ephemeral"}}]}]});
    let request = split(Format::AnthropicMessages, &body.to_string(), false).unwrap();
    assert!(request.caches_history);
    let built = json!({"messages": [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "next"}]});
    let merged: Value =
        serde_json::from_str(&merge(&request, &built.to_string(), None, None)).unwrap();
    let messages = merged["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"], "task");
    assert_eq!(
        messages[2]["content"],
        json!([{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}])
    );
    // A client that marks none gets none.
    let plain =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "task"}]});
    let request = split(Format::AnthropicMessages, &plain.to_string(), false).unwrap();
    assert!(!merge(&request, &built.to_string(), None, None).contains("cache_control"));
}

#[test]
fn developer_messages_go_back_as_developer_messages() {
    let history =
        json!([{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi."}]);
    for provider in [Format::OpenAiChat, Format::OpenAiResponses] {
        let read = ingest::items(provider, &history.to_string()).unwrap();
        let sent = rendered(provider, &read.messages);
        assert_eq!(sent[0]["role"], "developer", "{provider:?}: {sent}");
        assert_eq!(sent[1]["role"], "user");
    }
    let system = json!([{"role": "system", "content": "Be brief."}]);
    let read = ingest::items(Format::OpenAiChat, &system.to_string()).unwrap();
    assert_eq!(
        rendered(Format::OpenAiChat, &read.messages)[0]["role"],
        "system"
    );
}

#[test]
fn offered_tools_follow_the_clients_own_in_each_shape() {
    let added = crate::recall::definitions();
    let cases = [
        (
            Format::AnthropicMessages,
            json!({"messages": [], "tools": [{"name": "bash", "input_schema": {"type": "object"}}]}),
            "/0/name",
        ),
        (
            Format::OpenAiChat,
            json!({"messages": [], "tools": [{"type": "function", "function": {"name": "bash"}}]}),
            "/0/function/name",
        ),
        (
            Format::OpenAiResponses,
            json!({"input": [], "tools": [{"type": "function", "name": "bash"}]}),
            "/0/name",
        ),
        (
            Format::Gemini,
            json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "bash"}]}]}),
            "/0/functionDeclarations/0/name",
        ),
    ];
    for (provider, body, first) in cases {
        let request = split(provider, &body.to_string(), false).unwrap();
        let tools = offering(&request, &added, crate::recall::PREFIX).unwrap();
        let merged: Value =
            serde_json::from_str(&merge(&request, "{}", None, Some(&tools))).unwrap();
        let text = merged["tools"].to_string();
        assert_eq!(
            merged["tools"].pointer(first),
            Some(&json!("bash")),
            "{provider:?}"
        );
        assert!(text.contains(crate::recall::SEARCH) && text.contains(crate::recall::EXPAND));
        if provider == Format::Gemini {
            // One group of declarations: the client's, with ctxd's after.
            assert_eq!(merged["tools"].as_array().unwrap().len(), 1);
            assert_eq!(
                merged["tools"][0]["functionDeclarations"]
                    .as_array()
                    .unwrap()
                    .len(),
                3
            );
        } else {
            assert_eq!(merged["tools"].as_array().unwrap().len(), 3, "{provider:?}");
        }
    }
    // A request without tools gets ctxd's alone.
    let request = split(Format::OpenAiChat, r#"{"messages": []}"#, false).unwrap();
    let tools = offering(&request, &added, crate::recall::PREFIX).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(tools.get())
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_client_tool_with_a_reserved_name_is_refused_naming_it() {
    let body = json!({"contents": [], "tools": [{"googleSearch": {}}, {"function_declarations": [{"name": "x"}, {"name": "ctxd_recall_search"}]}]});
    let request = split(Format::Gemini, &body.to_string(), false).unwrap();
    let error = offering(
        &request,
        &crate::recall::definitions(),
        crate::recall::PREFIX,
    )
    .unwrap_err();
    assert_eq!(error.path, "$.tools[1].function_declarations[1].name");
    let body = json!({"messages": [], "tools": {"name": "x"}});
    let request = split(Format::AnthropicMessages, &body.to_string(), false).unwrap();
    assert_eq!(offering(&request, &[], "p").unwrap_err().path, "$.tools");
}
