//! The session file (`ctxd_core::export`): what is written reads back as it was, and a
//! file with any one byte changed, or cut anywhere, is refused — it never reads back as a
//! different session.
use std::collections::BTreeMap;

use chrono::{TimeZone as _, Utc};
use ctxd_core::budget::Status;
use ctxd_core::export::{self, Limits, MessageRecord, SessionRecord, Snapshot, State};
use ctxd_core::message::{Message, Role, StoredMessage, ToolCall, ViewState};
use ctxd_core::policy::Policy;
use ctxd_core::session::BuildRecord;
use proptest::prelude::*;

const LIMITS: Limits = Limits {
    max_message_bytes: 1 << 20,
    max_session_bytes: 64 << 20,
};

/// A turn: the user's text, then an assistant call and its result, or an answer.
fn turn(index: usize, text: &str, with_tool: bool) -> Vec<Message> {
    let mut turn = vec![Message::text(Role::User, text)];
    if with_tool {
        let id = format!("call-{index}");
        turn.push(Message {
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "bash".into(),
                arguments: r#"{"cmd":"ls"}"#.into(),
            }],
            ..Message::text(Role::Assistant, "")
        });
        turn.push(Message {
            tool_call_id: id,
            ..Message::text(Role::Tool, format!("output of {text}"))
        });
    }
    turn.push(Message::text(Role::Assistant, format!("done: {text}")));
    turn
}

/// A snapshot whose totals are what its messages add up to.
fn snapshot(turns: &[(String, bool, i64)]) -> Snapshot {
    let at = Utc.with_ymd_and_hms(2026, 11, 28, 12, 0, 0).unwrap();
    let mut messages = Vec::new();
    for (index, (text, with_tool, tokens)) in turns.iter().enumerate() {
        for message in turn(index, text, *with_tool) {
            let stored = StoredMessage {
                seq: messages.len() as i64 + 1,
                turn: index as i64 + 1,
                token_count: *tokens,
                view_tokens: *tokens,
                view_state: ViewState::Full,
                created_at: at,
                message,
            };
            messages.push(MessageRecord::from_stored(&stored));
        }
    }
    let stored: Vec<StoredMessage> = messages.iter().map(|m| m.to_stored().unwrap()).collect();
    let log_tokens: i64 = stored.iter().map(|m| m.token_count).sum();
    let state = State {
        version: stored.len() as i64,
        message_count: stored.len() as i64,
        turn_count: turns.len() as i64,
        log_tokens,
        content_bytes: stored
            .iter()
            .map(|m| m.message.counted_bytes() as i64)
            .sum(),
        view_tokens: log_tokens,
        last_turn_tokens: 0,
        view_first_seq: 1,
        view_epoch: 0,
        anchor: None,
        est_samples: 0,
        est_abs_err_sum: 0.0,
        est_max_abs_err: 0.0,
        est_last_err: 0.1,
        usage_input_tokens: 0,
        usage_output_tokens: 0,
        usage_cached_tokens: 0,
        cleared_messages: 0,
        evicted_messages: 0,
        builds: 0,
        extending_builds: 0,
        last_build: BuildRecord::default(),
        summary_tokens: 0,
        summaries_written: 0,
        compaction_failures: 0,
        budget_status: Status::Ok,
        compaction_resume_log_tokens: 0,
    };
    Snapshot {
        session: SessionRecord {
            id: "s-1".into(),
            policy: Policy::default(),
            metadata: BTreeMap::from([("user".to_string(), "ada".to_string())]),
            forked_from: None,
            created_at: at,
            finished_at: None,
            state,
        },
        messages,
        summaries: Vec::new(),
        ledger: Vec::new(),
    }
}

fn turns() -> impl Strategy<Value = Vec<(String, bool, i64)>> {
    prop::collection::vec(("[a-z é\"\\\\{}]{1,24}", any::<bool>(), 1i64..500), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_file_reads_back_as_written(turns in turns()) {
        let snapshot = snapshot(&turns);
        let file = export::write(&snapshot, Utc::now());
        let read = export::read(&file, LIMITS).unwrap();
        prop_assert_eq!(&read.session, &snapshot.session);
        let messages: Vec<MessageRecord> = read.messages.iter().map(MessageRecord::from_stored).collect();
        prop_assert_eq!(messages, snapshot.messages);
    }

    #[test]
    fn a_changed_byte_is_refused(turns in turns(), at in any::<prop::sample::Index>(), xor in 1u8..=255) {
        let mut file = export::write(&snapshot(&turns), Utc::now());
        let at = at.index(file.len());
        file[at] ^= xor;
        prop_assert!(export::read(&file, LIMITS).is_err(), "byte {} changed and read", at);
    }

    #[test]
    fn a_cut_file_is_refused(turns in turns(), at in any::<prop::sample::Index>()) {
        let file = export::write(&snapshot(&turns), Utc::now());
        let cut = at.index(file.len());
        prop_assert!(export::read(&file[..cut], LIMITS).is_err(), "cut at {} and read", cut);
    }
}
