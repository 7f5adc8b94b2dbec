use proptest::prelude::*;

use super::extract::{errors, exit_status, extract, normalize_path};
use super::render::{HEADING, left_to_summaries, render, shown_counts};
use super::todos::{NoteUpdate, TodoUpdate, next_status, plan};
use super::*;
use crate::message::{Message, Role, ToolCall};
use crate::tokenize::{Counter, Tokenizer};

fn call(id: &str, arguments: &str) -> Message {
    let mut message = Message::text(Role::Assistant, "");
    message.tool_calls.push(ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: arguments.into(),
    });
    message
}

fn result(id: &str, content: &str) -> Message {
    let mut message = Message::text(Role::Tool, content);
    message.tool_call_id = id.into();
    message
}

/// A result as mini-swe-agent returned it in the corpus (django__django-11099).
const TRACEBACK_RESULT: &str = "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"/testbed/test_username_validator.py\", line 2, in <module>\n    from django.contrib.auth.validators import ASCIIUsernameValidator\n  File \"/testbed/django/contrib/auth/__init__.py\", line 7, in <module>\n    from django.middleware.csrf import rotate_token\ndjango.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not configured.\n</output>";

#[test]
fn a_corpus_exchange_gives_files_commands_exit_status_and_the_error() {
    let messages = [
        call(
            "call_00_a",
            r#"{"command": "cat ./django/contrib/auth/validators.py"}"#,
        ),
        result(
            "call_00_a",
            "<returncode>0</returncode>\n<output>\nimport re\n",
        ),
        call(
            "call_00_b",
            r#"{"command": "python test_username_validator.py"}"#,
        ),
        result("call_00_b", TRACEBACK_RESULT),
    ];
    let seqs: Vec<(i64, &Message)> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (i as i64 + 3, m))
        .collect();
    let out = extract(&seqs);
    let keys: Vec<(Kind, &str, &[i64])> = out
        .entries
        .iter()
        .map(|e| (e.kind, e.key.as_str(), e.seqs.as_slice()))
        .collect();
    assert_eq!(
        keys,
        [
            (Kind::File, "django/contrib/auth/validators.py", &[3][..]),
            (
                Kind::Command,
                "cat ./django/contrib/auth/validators.py",
                &[3, 4][..]
            ),
            (Kind::File, "test_username_validator.py", &[5][..]),
            (
                Kind::Command,
                "python test_username_validator.py",
                &[5, 6][..]
            ),
            (
                Kind::Error,
                "django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not configured.",
                &[6][..]
            ),
        ]
    );
    assert_eq!(
        out.entries[1].runs,
        [Run {
            result_seq: 4,
            exit_code: 0
        }]
    );
    assert_eq!(
        out.entries[3].runs,
        [Run {
            result_seq: 6,
            exit_code: 1
        }]
    );
    assert!(out.outcomes.is_empty());
}

#[test]
fn a_result_of_an_earlier_call_is_an_outcome() {
    let message = result(
        "call_9",
        "exit code: 2\nerror[E0425]: cannot find value `x` in this scope",
    );
    let out = extract(&[(10, &message)]);
    assert_eq!(
        out.outcomes,
        [extract::Outcome {
            call_id: "call_9".into(),
            seq: 10,
            exit_code: 2
        }]
    );
    assert_eq!(
        out.entries[0].key,
        "error[E0425]: cannot find value `x` in this scope"
    );
}

#[test]
fn argument_keys_name_files_and_editor_subcommands_are_not_commands() {
    let message = call(
        "c1",
        r#"{"command": "view", "path": "/testbed/./src/../src/lib.rs:12"}"#,
    );
    let out = extract(&[(1, &message)]);
    assert_eq!(out.entries.len(), 1);
    assert_eq!(out.entries[0].kind, Kind::File);
    assert_eq!(out.entries[0].key, "/testbed/src/lib.rs");
    let grep = call("c2", r#"{"pattern": "fn main\\(", "path": "src"}"#);
    let out = extract(&[(1, &grep)]);
    let keys: Vec<&str> = out.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["src"], "a regular expression is not a file");
    let glob = call("c3", r#"{"pattern": "**/*.rs"}"#);
    assert_eq!(extract(&[(1, &glob)]).entries[0].key, "**/*.rs");
    let argv = call(
        "c4",
        r#"{"cmd": ["bash", "-lc", "cargo test -p core\necho done"]}"#,
    );
    let out = extract(&[(1, &argv)]);
    assert_eq!(out.entries[0].key, "cargo test -p core");
    assert_eq!(out.entries[0].text, "cargo test -p core …");
}

#[test]
fn paths_normalize() {
    for (raw, want) in [
        ("./a/b.py", Some("a/b.py")),
        ("a//b/./c.py", Some("a/b/c.py")),
        ("a/b/../c.py", Some("a/c.py")),
        ("/x/../../y.py", Some("/y.py")),
        ("'src/main.rs:10:4',", Some("src/main.rs")),
        ("src/", Some("src")),
        ("./", None),
        ("..", None),
        ("", None),
    ] {
        assert_eq!(normalize_path(raw).as_deref(), want, "{raw:?}");
    }
}

#[test]
fn exit_statuses_in_their_usual_spellings() {
    for (text, want) in [
        ("<returncode>127</returncode>", Some(127)),
        ("Process exited with code 3", Some(3)),
        ("{\"exit_code\": 0, \"stdout\": \"\"}", Some(0)),
        ("output\n...\nExit status: -1", Some(-1)),
        ("no status here", None),
    ] {
        assert_eq!(exit_status(text), want, "{text:?}");
    }
}

#[test]
fn errors_are_last_lines_of_tracebacks_and_error_lines_not_code() {
    let text = "    except KeyError:\nraise ValueError: no\nError: could not open file\n  indented Error: no\nE   AssertionError: assert 1 == 2\nTraceback (most recent call last):\n  File \"x.py\", line 1\nDuring handling of the above exception\n";
    assert_eq!(
        errors(text),
        [
            "Error: could not open file",
            "AssertionError: assert 1 == 2"
        ],
    );
    let many = "ValueError: a\nValueError: b\nValueError: c\nValueError: d\nValueError: a";
    assert_eq!(
        errors(many),
        ["ValueError: c", "ValueError: d", "ValueError: a"]
    );
}

#[test]
fn done_is_terminal() {
    let done = Some(TodoStatus::Done);
    assert_eq!(
        next_status(done, Some(TodoStatus::Pending)),
        (TodoStatus::Done, true)
    );
    assert_eq!(
        next_status(done, Some(TodoStatus::InProgress)),
        (TodoStatus::Done, true)
    );
    assert_eq!(next_status(done, None), (TodoStatus::Done, false));
    assert_eq!(next_status(None, None), (TodoStatus::Pending, false));
    assert_eq!(
        next_status(Some(TodoStatus::InProgress), Some(TodoStatus::Pending)),
        (TodoStatus::Pending, false)
    );
}

fn todo(id: &str, text: &str, status: Option<TodoStatus>) -> TodoUpdate {
    TodoUpdate {
        id: id.into(),
        text: text.into(),
        status,
    }
}

#[test]
fn plans_name_the_field_they_refuse() {
    let field = |result: Result<todos::Plan, crate::error::Error>| match result {
        Err(crate::error::Error::InvalidArgument { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(plan(&[], &[todo("", "x", None)], &[], 0)),
        "todos[0].id"
    );
    assert_eq!(
        field(plan(&[], &[todo("a", "", None)], &[], 0)),
        "todos[0].text"
    );
    assert_eq!(
        field(plan(
            &[],
            &[todo("a", "x", None), todo("a", "y", None)],
            &[],
            0
        )),
        "todos[1].id"
    );
    assert_eq!(
        field(plan(&[], &[todo("a", &"x".repeat(2_001), None)], &[], 0)),
        "todos[0].text"
    );
    let note = NoteUpdate {
        id: "n".into(),
        text: "a\0b".into(),
    };
    assert_eq!(field(plan(&[], &[], &[note], 0)), "notes[0].text");
    let many: Vec<TodoUpdate> = (0..101).map(|i| todo(&i.to_string(), "x", None)).collect();
    assert_eq!(field(plan(&[], &many, &[], 0)), "todos");
}

fn counter() -> Counter {
    Counter::new(
        Tokenizer::Heuristic {
            chars_per_token: 4.0,
        },
        0,
    )
}

fn entry(kind: Kind, key: &str, seqs: Vec<i64>, position: i64) -> Entry {
    Entry {
        kind,
        key: key.into(),
        text: key.into(),
        seqs,
        runs: Vec::new(),
        status: (kind == Kind::Todo).then_some(TodoStatus::Pending),
        position,
    }
}

#[test]
fn only_what_the_view_hides_is_rendered_and_the_oldest_fold_into_counts() {
    let counter = counter();
    let count = |text: &str| counter.text(text);
    let mut entries: Vec<Entry> = (0..40)
        .map(|i| entry(Kind::File, &format!("src/file_{i:02}.rs"), vec![i + 1], i))
        .collect();
    let mut command = entry(Kind::Command, "cargo test", vec![50, 51], 40);
    command.runs = vec![Run {
        result_seq: 51,
        exit_code: 101,
    }];
    entries.push(command);
    entries.push(entry(Kind::Todo, "t1", vec![], 41));
    // The view starts at seq 30: files 0..=28 are compacted away, the command is shown.
    let hidden = |seq: i64| seq < 30;
    let block = render(&entries, &hidden, 10_000, &count).unwrap();
    assert!(block.text.starts_with(HEADING));
    assert!(block.text.contains("src/file_28.rs"));
    assert!(!block.text.contains("src/file_29.rs"));
    assert!(!block.text.contains("cargo test"));
    assert!(block.text.contains("[pending] t1: t1"));
    let small = render(&entries, &hidden, 60, &count).unwrap();
    assert!(small.tokens <= 60);
    let folded = small.folded[&Kind::File];
    assert!(
        small
            .text
            .contains(&format!("… and {folded} earlier files"))
    );
    assert!(
        small.text.contains("src/file_28.rs"),
        "the newest stay listed"
    );
    assert!(
        !small.text.contains("src/file_00.rs"),
        "the oldest fold first"
    );
    // The command's run is shown once its result is hidden.
    let later = |seq: i64| seq < 60;
    assert!(
        render(&entries, &later, 10_000, &count)
            .unwrap()
            .text
            .contains("cargo test (exit 101)")
    );
    assert_eq!(render(&entries, &hidden, 0, &count), None);
}

fn arb_message() -> impl Strategy<Value = Message> {
    let text = prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9_./: \\n<>-]{0,80}",
        Just(TRACEBACK_RESULT.to_string()),
    ];
    (0..4usize, text.clone(), text, "[a-c]").prop_map(|(role, content, args, id)| match role {
        0 => call(
            &id,
            &format!("{{\"command\": {}}}", serde_json::Value::String(args)),
        ),
        1 => call(&id, &args),
        // U+0000 spelled as an escape in the arguments.
        2 => call(
            &id,
            &format!(
                "{{\"command\": \"ls \\u0000{}\", \"path\": \"a\\u0000b\"}}",
                args.len()
            ),
        ),
        _ => result(&id, &content),
    })
}

fn arb_entries() -> impl Strategy<Value = Vec<Entry>> {
    prop::collection::vec(
        (
            0..5usize,
            "[a-z/ ._]{1,40}",
            prop::collection::vec(1..200i64, 0..4),
            0..3i16,
        ),
        0..60,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (kind, key, seqs, status))| {
                let kind = Kind::ALL[kind];
                Entry {
                    kind,
                    key: format!("{key}{i}"),
                    text: key,
                    seqs: merge_seqs(&seqs, &[]),
                    runs: vec![Run {
                        result_seq: seqs.first().copied().unwrap_or(1),
                        exit_code: 1,
                    }],
                    status: (kind == Kind::Todo).then(|| TodoStatus::from_i16(status + 1).unwrap()),
                    position: i as i64,
                }
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn extraction_never_panics_and_keeps_its_bounds(messages in prop::collection::vec(arb_message(), 0..12)) {
        let seqs: Vec<(i64, &Message)> = messages.iter().enumerate().map(|(i, m)| (i as i64 + 1, m)).collect();
        let out = extract(&seqs);
        for found in &out.entries {
            prop_assert!(found.key.chars().count() <= MAX_DERIVED_CHARS + 2);
            prop_assert!(!found.key.is_empty());
            prop_assert!(!found.key.contains('\0') && !found.text.contains('\0'));
            prop_assert!(found.seqs.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(found.seqs.len() <= MAX_ENTRY_SEQS && found.runs.len() <= MAX_ENTRY_RUNS);
            prop_assert!(found.seqs.iter().all(|s| (1..=messages.len() as i64).contains(s)));
        }
    }

    #[test]
    fn rendering_stays_within_the_cap_and_accounts_for_every_entry(
        entries in arb_entries(),
        boundary in 0..220i64,
        cap in 0..400i64,
    ) {
        let counter = counter();
        let count = |text: &str| counter.text(text);
        let hidden = |seq: i64| seq < boundary;
        let shown = shown_counts(&entries, &hidden);
        match render(&entries, &hidden, cap, &count) {
            Some(block) => {
                prop_assert!(block.tokens <= cap);
                prop_assert_eq!(block.tokens, count(&block.text));
                for (kind, n) in &shown {
                    let listed = block.listed.get(kind).copied().unwrap_or(0);
                    let folded = block.folded.get(kind).copied().unwrap_or(0);
                    prop_assert_eq!(listed + folded, *n, "{:?}", kind);
                }
            }
            // A block of counts alone costs at most about a hundred tokens.
            None => prop_assert!(shown.is_empty() || cap < 120),
        }
    }

    #[test]
    fn appending_never_changes_the_block(
        entries in arb_entries(),
        boundary in 1..220i64,
        added in prop::collection::vec((0..60usize, 0..40i64), 0..20),
    ) {
        // An append adds seqs at or after the view's start (never hidden) to entries.
        let counter = counter();
        let count = |text: &str| counter.text(text);
        let hidden = |seq: i64| seq < boundary;
        let before = render(&entries, &hidden, 300, &count);
        let mut after = entries.clone();
        for (at, offset) in added {
            if let Some(entry) = after.get_mut(at) && entry.kind.is_derived() {
                entry.seqs = merge_seqs(&entry.seqs, &[boundary + offset]);
                entry.runs.push(Run { result_seq: boundary + offset, exit_code: 7 });
            }
        }
        prop_assert_eq!(render(&after, &hidden, 300, &count), before);
    }

    #[test]
    fn a_done_todo_never_reverts(requests in prop::collection::vec(prop::collection::vec((0..4usize, 0..4i16), 0..6), 1..12)) {
        let mut stored: Vec<Entry> = Vec::new();
        let mut done: std::collections::HashSet<String> = Default::default();
        for request in requests {
            let mut seen = std::collections::HashSet::new();
            let updates: Vec<TodoUpdate> = request
                .into_iter()
                .filter(|(id, _)| seen.insert(*id))
                .map(|(id, status)| todo(&format!("t{id}"), "do it", TodoStatus::from_i16(status)))
                .collect();
            let plan = plan(&stored, &updates, &[], 1).unwrap();
            for upsert in plan.upserts {
                match stored.iter_mut().find(|e| e.key == upsert.key) {
                    Some(existing) => *existing = upsert,
                    None => stored.push(upsert),
                }
            }
            for entry in &stored {
                if done.contains(&entry.key) {
                    prop_assert_eq!(entry.status, Some(TodoStatus::Done));
                }
                if entry.status == Some(TodoStatus::Done) {
                    done.insert(entry.key.clone());
                }
            }
        }
    }
}

#[test]
fn a_command_run_many_times_keeps_its_first_seq_and_newest_runs() {
    let mut messages = Vec::new();
    for i in 0..40 {
        let id = format!("c{i}");
        messages.push(call(&id, r#"{"command": "make test"}"#));
        messages.push(result(&id, &format!("exit code {}", i % 3)));
    }
    let seqs: Vec<(i64, &Message)> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (i as i64 + 1, m))
        .collect();
    let out = extract(&seqs);
    let command = &out.entries[0];
    assert_eq!(command.key, "make test");
    assert_eq!(command.seqs.len(), MAX_ENTRY_SEQS);
    assert_eq!(command.seqs[0], 1);
    assert_eq!(command.seqs.last(), Some(&80));
    assert_eq!(command.runs.len(), MAX_ENTRY_RUNS);
    assert_eq!(
        command.runs.last(),
        Some(&Run {
            result_seq: 80,
            exit_code: 39 % 3
        })
    );
}

#[test]
fn what_a_summary_names_is_left_to_it_but_a_failed_command_stays() {
    let summaries = ["Tool calls (bash):\n- cargo test\n- ls src\nFiles: src/lib.rs"];
    let hidden = |seq: i64| seq < 10;
    let mut passed = entry(Kind::Command, "cargo test", vec![3, 4], 0);
    passed.runs = vec![Run {
        result_seq: 4,
        exit_code: 0,
    }];
    assert!(left_to_summaries(&passed, &hidden, &summaries));
    // Its last hidden run failed: listed for the exit status.
    let mut failed = passed.clone();
    failed.runs.push(Run {
        result_seq: 6,
        exit_code: 101,
    });
    assert!(!left_to_summaries(&failed, &hidden, &summaries));
    // A later run the view shows counts for nothing: an append changes nothing.
    failed.runs.push(Run {
        result_seq: 12,
        exit_code: 0,
    });
    assert!(!left_to_summaries(&failed, &hidden, &summaries));
    assert!(left_to_summaries(
        &entry(Kind::File, "src/lib.rs", vec![2], 1),
        &hidden,
        &summaries
    ));
    // Not named, or not derived: listed.
    assert!(!left_to_summaries(
        &entry(Kind::File, "src/main.rs", vec![2], 2),
        &hidden,
        &summaries
    ));
    assert!(!left_to_summaries(
        &entry(Kind::Note, "cargo test", vec![], 3),
        &hidden,
        &summaries
    ));
}
