use super::*;
use crate::message::{Message, Role, StoredMessage, ViewState};
use crate::tokenize::{Counter, Tokenizer};

fn counter() -> Counter {
    Counter::new(
        Tokenizer::Heuristic {
            chars_per_token: 4.0,
        },
        1000,
    )
}

#[test]
fn the_definitions_are_json_schemas_with_reserved_names() {
    for tool in definitions() {
        assert!(tool.name.starts_with(PREFIX) && is_recall_tool(&tool.name));
        let schema: serde_json::Value = serde_json::from_str(&tool.parameters_json_schema).unwrap();
        assert_eq!(schema["type"], "object");
    }
    assert!(!is_recall_tool("ctxd_recall_other"));
}

#[test]
fn search_arguments_are_read_and_bounded() {
    let call = parse(
        SEARCH,
        r#"{"query":" flaky test ","role":"tool","limit":3}"#,
    )
    .unwrap();
    assert_eq!(
        call,
        RecallCall::Search {
            query: "flaky test".into(),
            roles: vec![Role::Tool],
            since: None,
            until: None,
            limit: 3
        }
    );
    for (arguments, field) in [
        ("{}", "query"),
        (r#"{"query":""}"#, "query"),
        (r#"{"query":"x","limit":11}"#, "limit"),
        (r#"{"query":"x","role":"system"}"#, "role"),
        (r#"{"query":"x","since":"yesterday"}"#, "since"),
        ("[1]", "JSON object"),
        ("not json", "JSON object"),
    ] {
        let error = parse(SEARCH, arguments).unwrap_err();
        assert!(error.contains(field), "{arguments}: {error}");
    }
}

#[test]
fn expand_takes_exactly_one_target() {
    assert_eq!(
        parse(EXPAND, r#"{"seqs":[3,4]}"#).unwrap(),
        RecallCall::Expand {
            target: Target::Seqs(vec![3, 4]),
            max_tokens: 1500,
            offset: 0
        }
    );
    assert_eq!(
        parse(
            EXPAND,
            r#"{"first_seq":2,"last_seq":9,"max_tokens":400,"offset":7}"#
        )
        .unwrap(),
        RecallCall::Expand {
            target: Target::Range {
                first_seq: 2,
                last_seq: 9
            },
            max_tokens: 400,
            offset: 7
        }
    );
    assert_eq!(
        parse(EXPAND, r#"{"summary_id":7}"#).unwrap(),
        RecallCall::Expand {
            target: Target::Summary(7),
            max_tokens: 1500,
            offset: 0
        }
    );
    for arguments in [
        "{}",
        r#"{"seqs":[1],"summary_id":2}"#,
        r#"{"first_seq":5,"last_seq":2}"#,
        r#"{"seqs":[-1]}"#,
        r#"{"seqs":[]}"#,
        r#"{"summary_id":1,"max_tokens":99999}"#,
    ] {
        assert!(parse(EXPAND, arguments).is_err(), "{arguments}");
    }
}

fn stored(seq: i64, role: Role, text: &str) -> StoredMessage {
    StoredMessage {
        seq,
        turn: 1,
        token_count: 1,
        view_tokens: 1,
        view_state: ViewState::Evicted,
        created_at: chrono::Utc::now(),
        message: Message::text(role, text),
    }
}

#[test]
fn an_expand_answer_stays_within_its_cap_and_says_where_to_go_on() {
    let messages: Vec<StoredMessage> = (1..=5)
        .map(|seq| stored(seq, Role::Tool, &"output line\n".repeat(100)))
        .collect();
    let answer = expand_answer(&messages, 0, 300, 0, &counter());
    assert!(answer.len() <= 300 * 3 + 200, "{}", answer.len());
    assert!(answer.contains("[seq 1 · tool result · not shown above]"));
    assert!(answer.contains("continue with first_seq"), "{answer}");
    let whole = expand_answer(&messages[..1], 0, 4000, 0, &counter());
    assert!(
        whole.trim_end().ends_with("output line") && !whole.contains("continue"),
        "{whole}"
    );
    // A first message larger than the cap is clipped, not dropped.
    let big = [stored(9, Role::Tool, &"é".repeat(5000))];
    let answer = expand_answer(&big, 0, 100, 0, &counter());
    assert!(answer.contains("[seq 9") && answer.contains("continue with first_seq 9"));
    assert!(answer.len() <= 100 * 3 + 200);
}

#[test]
fn reading_on_from_the_offset_an_answer_gives_covers_the_message_once() {
    let text: String = (0..2000).map(|n| format!("line {n} é\n")).collect();
    let big = [stored(4, Role::Tool, &text)];
    let mut offset = 0;
    let mut read = String::new();
    for _ in 0..100 {
        let answer = expand_answer(&big, 0, 200, offset, &counter());
        let body = answer.split_once("]\n").unwrap().1;
        match answer.rsplit_once("and offset ") {
            Some((_, next)) => {
                let next: usize = next.trim_end_matches(']').parse().unwrap();
                read.push_str(&text[offset..next]);
                assert!(
                    body.starts_with(&text[offset..next]),
                    "the answer shows what it counts"
                );
                assert!(next > offset, "progress");
                offset = next;
            }
            None => {
                read.push_str(&text[offset..]);
                break;
            }
        }
    }
    assert_eq!(read, text);
}

#[test]
fn a_search_answer_names_where_each_hit_is() {
    let found = [
        Found {
            seq: 4,
            summary_id: 0,
            first_seq: 4,
            last_seq: 4,
            role: Some(Role::Tool),
            hidden: true,
            snippet: "FAILED test_x".into(),
        },
        Found {
            seq: 0,
            summary_id: 2,
            first_seq: 1,
            last_seq: 30,
            role: None,
            hidden: false,
            snippet: "ran the suite".into(),
        },
    ];
    let answer = search_answer("test_x", &found, 1000, &counter());
    assert!(
        answer.contains("- seq 4 (tool result, not shown above): FAILED test_x"),
        "{answer}"
    );
    assert!(
        answer.contains("- summary_id 2 (seqs 1-30): ran the suite"),
        "{answer}"
    );
    assert!(search_answer("nothing", &[], 1000, &counter()).starts_with("No match"));
}

#[test]
fn recall_traffic_is_answers_and_calls_only_to_recall_tools() {
    let mut answer = Message::text(Role::Tool, "1 match(es)");
    assert!(!is_recall_traffic(&answer));
    answer.metadata.insert(ANSWER.into(), "search".into());
    assert!(is_recall_traffic(&answer));
    let call = |name: &str| crate::message::ToolCall {
        id: name.into(),
        name: name.into(),
        arguments: "{}".into(),
    };
    let mut asking = Message::text(Role::Assistant, "");
    asking.tool_calls = vec![call(SEARCH), call(EXPAND)];
    assert!(is_recall_traffic(&asking));
    asking.tool_calls.push(call("bash"));
    assert!(
        !is_recall_traffic(&asking),
        "a call of the agent's own is not"
    );
}

#[test]
fn answers_keep_to_their_cap_in_tokens_whatever_the_text() {
    // One token per character: three characters per token would give three times the cap.
    let dense = Counter::new(
        Tokenizer::Heuristic {
            chars_per_token: 1.0,
        },
        1000,
    );
    let cjk = [stored(5, Role::Tool, &"字".repeat(20_000))];
    let answer = expand_answer(&cjk, 0, 500, 0, &dense);
    assert!(dense.text(&answer) <= 500, "{}", dense.text(&answer));
    assert!(
        answer.contains("continue with first_seq 5 and offset"),
        "{answer}"
    );
    let found: Vec<Found> = (1..=10)
        .map(|seq| Found {
            seq,
            summary_id: 0,
            first_seq: seq,
            last_seq: seq,
            role: Some(Role::Tool),
            hidden: true,
            snippet: "字".repeat(300),
        })
        .collect();
    let answer = search_answer("字", &found, 700, &dense);
    assert!(dense.text(&answer) <= 700, "{}", dense.text(&answer));
    assert!(
        answer.contains("- seq 1 ") && !answer.contains("- seq 10 "),
        "the best hits kept"
    );
}

fn reply(calls: &[(&str, &str)]) -> Message {
    let mut message = Message::text(Role::Assistant, "Let me look.");
    message.tool_calls = calls
        .iter()
        .map(|(id, name)| crate::message::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: "{}".into(),
        })
        .collect();
    message
}

#[test]
fn a_reply_is_a_round_when_it_calls_a_recall_tool() {
    assert_eq!(round(&[reply(&[("a", "bash")])]), None);
    assert_eq!(round(&[Message::text(Role::Assistant, "done")]), None);
    let mixed = [
        reply(&[("a", SEARCH), ("b", "bash")]),
        reply(&[("c", EXPAND)]),
    ];
    assert_eq!(
        round(&mixed),
        Some(Round {
            recall: vec!["a".into(), "c".into()],
            others: vec![("b".into(), "bash".into())],
        })
    );
}

#[test]
fn a_rounds_messages_are_recall_traffic() {
    let mut marked = vec![reply(&[("a", SEARCH), ("b", "bash")])];
    // Text and an agent's call: not traffic by its calls alone.
    assert!(!is_recall_traffic(&marked[0]));
    mark(&mut marked, 2);
    assert!(is_recall_traffic(&marked[0]));
    assert_eq!(marked[0].metadata[ROUND], "2");
    let note = not_run("b", "bash");
    assert!(is_recall_traffic(&note));
    assert_eq!((note.role, note.tool_call_id.as_str()), (Role::Tool, "b"));
    assert!(note.content.contains("bash"));
}
