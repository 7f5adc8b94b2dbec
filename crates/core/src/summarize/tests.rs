//! The extractive summarizer and the retention facts, by example and by property.
use super::*;
use crate::message::{Role, ToolCall};
use crate::tokenize::Tokenizer;

fn counter() -> Counter {
    Counter::new(Tokenizer::O200kBase, 0)
}

fn session() -> Vec<Message> {
    let mut call = Message::text(Role::Assistant, "I will run the tests.");
    call.tool_calls = vec![ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        arguments: r#"{"command":"cd /repo && pytest tests/test_models.py"}"#.into(),
    }];
    let mut result = Message::text(
        Role::Tool,
        "collected 3 items\nFAILED tests/test_models.py::test_save - AssertionError: 1 != 2\n",
    );
    result.tool_call_id = "c1".into();
    vec![
        Message::text(
            Role::User,
            "Fix the failing test in django/db/models/base.py please.",
        ),
        call,
        result,
        Message::text(
            Role::Assistant,
            "The save() override drops the pk; fixing base.py.",
        ),
    ]
}

#[test]
fn extractive_keeps_requests_commands_files_and_errors() {
    let messages = session();
    let input = Input {
        messages: &messages,
        summaries: &[],
        previous: None,
        first_seq: 1,
        last_seq: 4,
        target_tokens: 1_000,
    };
    let summary = Extractive.summarize(&input, Level::Normal, &counter());
    for kept in [
        "messages 1-4",
        "Fix the failing test",
        "Tool calls (bash):\n- cd /repo && pytest tests/test_models.py\n",
        "AssertionError: 1 != 2",
        "django/db/models/base.py",
        "tests/test_models.py",
        "drops the pk",
    ] {
        assert!(summary.contains(kept), "{kept:?} missing from:\n{summary}");
    }
    // Deterministic.
    assert_eq!(
        summary,
        Extractive.summarize(&input, Level::Normal, &counter())
    );
}

#[test]
fn facts_by_kind_and_what_a_summary_lost() {
    let mut messages = session();
    messages.push(Message::text(
        Role::Assistant,
        "Renamed get_pk_value to pkValue in QuerySet; set DJANGO_SETTINGS_MODULE.",
    ));
    let facts = facts(&messages, &[]);
    assert_eq!(
        facts.paths.iter().collect::<Vec<_>>(),
        [
            "/repo",
            "django/db/models/base.py",
            "tests/test_models.py",
            "tests/test_models.py::test_save"
        ]
    );
    assert_eq!(
        facts.commands.iter().collect::<Vec<_>>(),
        ["cd /repo && pytest tests/test_models.py"]
    );
    assert_eq!(
        facts.identifiers.iter().collect::<Vec<_>>(),
        [
            "DJANGO_SETTINGS_MODULE",
            "QuerySet",
            "get_pk_value",
            "pkValue",
            "test_models"
        ]
    );
    // The extract names the identifiers it has no other line for.
    let input = Input {
        messages: &messages,
        summaries: &[],
        previous: None,
        first_seq: 1,
        last_seq: 5,
        target_tokens: 1_000,
    };
    let summary = Extractive.summarize(&input, Level::Normal, &counter());
    let (kept, lost) = retention(&facts, &summary);
    assert_eq!(kept.lost(), 0, "lost {lost:?} in:\n{summary}");
    // A summary being condensed brings its commands, paths and identifiers along.
    let condensed = super::facts(&[], std::slice::from_ref(&summary));
    assert_eq!(condensed.commands, facts.commands);
    assert!(condensed.paths.is_superset(&facts.paths));
    let (partial, lost) = retention(&facts, "tests/test_models.py and QuerySet");
    assert_eq!(
        (
            partial.paths,
            partial.paths_lost,
            partial.commands_lost,
            partial.identifiers_lost
        ),
        (4, 3, 1, 3)
    );
    // Lost commands first, then error lines, paths and identifiers.
    assert_eq!(
        lost[..3],
        [
            "cd /repo && pytest tests/test_models.py",
            "FAILED tests/test_models.py::test_save - AssertionError: 1 != 2",
            "/repo"
        ]
    );
    // The lost facts listed after a text, within the budget.
    let wider = with_facts("short text", &lost, 40, &counter()).unwrap();
    assert!(counter().text(&wider) <= 40, "{wider}");
    assert!(wider.contains(ALSO_MENTIONED) && wider.contains("cd /repo && pytest"));
    assert_eq!(with_facts("short text", &lost, 3, &counter()), None);
}

#[test]
fn a_leaf_carries_the_first_request_forward() {
    let messages = session();
    let first = Extractive.summarize(
        &Input {
            messages: &messages[..2],
            summaries: &[],
            previous: None,
            first_seq: 1,
            last_seq: 2,
            target_tokens: 1_000,
        },
        Level::Normal,
        &counter(),
    );
    assert!(!first.contains(CONTINUES));
    let later = |previous: &str| {
        Extractive.summarize(
            &Input {
                messages: &messages[2..],
                summaries: &[],
                previous: Some(previous),
                first_seq: 3,
                last_seq: 4,
                target_tokens: 1_000,
            },
            Level::Normal,
            &counter(),
        )
    };
    let second = later(&first);
    let carried = format!("{CONTINUES}Fix the failing test in django/db/models/base.py please.");
    assert!(second.contains(&carried), "{second}");
    // And on through a summary that itself carries it.
    assert!(later(&second).contains(&carried));
}

#[test]
fn every_level_fits_the_target() {
    let long: Vec<Message> = (0..200)
        .map(|i| Message::text(Role::User, format!("request {i}: {}", "detail ".repeat(80))))
        .collect();
    for level in [Level::Normal, Level::Aggressive, Level::Truncation] {
        let input = Input {
            messages: &long,
            summaries: &[],
            previous: None,
            first_seq: 1,
            last_seq: 200,
            target_tokens: 300,
        };
        let summary = Extractive.summarize(&input, level, &counter());
        assert!(counter().text(&summary) <= 300, "{level:?}");
        assert!(summary.starts_with("Summary of conversation messages 1-200"));
    }
}
