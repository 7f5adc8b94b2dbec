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

#[test]
fn a_condensed_summary_merges_its_parts_lists() {
    let messages = session();
    let leaf = |range: std::ops::Range<usize>, target: i64| {
        Extractive.summarize(
            &Input {
                messages: &messages[range.clone()],
                summaries: &[],
                previous: None,
                first_seq: range.start as i64 + 1,
                last_seq: range.end as i64,
                target_tokens: target,
            },
            Level::Normal,
            &counter(),
        )
    };
    // Both halves name base.py and the test file; the condensed summary lists each once.
    let children = [leaf(0..2, 1_000), leaf(2..4, 1_000)];
    let condensed = Extractive.summarize(
        &Input {
            messages: &[],
            summaries: &children,
            previous: None,
            first_seq: 1,
            last_seq: 4,
            target_tokens: 1_000,
        },
        Level::Normal,
        &counter(),
    );
    let all = facts(&messages, &[]);
    let (kept, lost) = retention(&all, &condensed);
    assert_eq!(
        (kept.lost(), kept.errors_lost),
        (0, 0),
        "lost {lost:?}:\n{condensed}"
    );
    assert!(condensed.starts_with("Summary of conversation messages 1-4"));
    assert_eq!(
        condensed.matches("Fix the failing test").count(),
        1,
        "{condensed}"
    );
    // The exit status of a failed command travels with it.
    let mut failed = session();
    failed[2].content = format!("<returncode>1</returncode>\n{}", failed[2].content);
    let summary = Extractive.summarize(
        &Input {
            messages: &failed,
            summaries: &[],
            previous: None,
            first_seq: 1,
            last_seq: 4,
            target_tokens: 1_000,
        },
        Level::Normal,
        &counter(),
    );
    assert!(
        summary.contains("- cd /repo && pytest tests/test_models.py [exit 1]\n"),
        "{summary}"
    );
    let again = Extractive.summarize(
        &Input {
            messages: &[],
            summaries: &[summary],
            previous: None,
            first_seq: 1,
            last_seq: 4,
            target_tokens: 1_000,
        },
        Level::Normal,
        &counter(),
    );
    assert!(
        again.contains("pytest tests/test_models.py [exit 1]\n"),
        "{again}"
    );
}

#[test]
fn summaries_in_the_earlier_format_condense_without_loss() {
    let earlier = "Summary of conversation messages 1-9 (extractive; the originals stay readable with Expand):\n\
        User requests:\n- Fix the parser\n\
        Actions (tool calls):\n- bash: grep -rn parse_args src/cli.rs\n- bash: cargo test\n\
        Errors seen:\n- error: could not compile `cli`\n\
        Files:\n- src/cli.rs\n- src/main.rs\n\
        Identifiers: parse_args, ArgMatches (2 more)\n\
        Also in this span: src/lib.rs; run_main\n";
    let condensed = Extractive.summarize(
        &Input {
            messages: &[],
            summaries: &[earlier.to_string()],
            previous: None,
            first_seq: 1,
            last_seq: 9,
            target_tokens: 1_000,
        },
        Level::Normal,
        &counter(),
    );
    for kept in [
        "Fix the parser",
        "Tool calls (bash):\n- grep -rn parse_args src/cli.rs\n- cargo test\n",
        "error: could not compile `cli`",
        "src/main.rs",
        "src/lib.rs",
        "ArgMatches",
        "run_main",
    ] {
        assert!(
            condensed.contains(kept),
            "{kept:?} missing from:\n{condensed}"
        );
    }
    let all = facts(&[], &[earlier.to_string()]);
    let (kept, lost) = retention(&all, &condensed);
    assert_eq!(kept.lost(), 0, "lost {lost:?}:\n{condensed}");
}

mod properties {
    use proptest::prelude::*;

    use super::super::sections::Sections;
    use super::*;

    fn path() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["", "./", "/testbed/"]),
            prop::collection::vec("[a-z][a-z_]{0,7}", 1..4),
            prop::sample::select(vec!["py", "rs", "txt", "toml"]),
        )
            .prop_map(|(root, dirs, ext)| format!("{root}{}.{ext}", dirs.join("/")))
    }

    fn identifier() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{2,6}_[a-z]{2,6}",
            "[a-z]{2,6}[A-Z][a-z]{2,6}",
            "[A-Z][a-z]{2,6}[A-Z][a-z]{2,6}",
        ]
    }

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z]{1,8}",
            1 => path(),
            1 => identifier(),
            1 => prop::sample::select(vec!["&&", "|", "-rn", "--", "\"x y\"", "'a'", "é", "\t"]).prop_map(String::from),
        ]
    }

    fn words(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(word(), 0..max).prop_map(|w| w.join(" "))
    }

    /// A line of tool output: plain, a named error, or a whole traceback.
    fn output_line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => words(8),
            1 => ("[A-Z][a-z]{2,8}", words(6)).prop_map(|(name, rest)| format!("{name}Error: {rest}")),
            1 => (path(), "[A-Z][a-z]{3,9}", words(4)).prop_map(|(file, error, rest)| format!(
                "Traceback (most recent call last):\n  File \"{file}\", line 3\n    call()\n{error}: {rest}"
            )),
            1 => words(5).prop_map(|rest| format!("FAILED {rest}")),
        ]
    }

    #[derive(Debug, Clone)]
    enum Step {
        User(String),
        Note(String),
        Calls(Vec<(String, Option<i64>, String)>),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            1 => words(12).prop_map(Step::User),
            2 => words(16).prop_map(Step::Note),
            5 => prop::collection::vec(
                (words(14), prop::option::of(0i64..3), prop::collection::vec(output_line(), 0..5).prop_map(|l| l.join("\n"))),
                1..3,
            ).prop_map(Step::Calls),
        ]
    }

    /// A conversation: user requests, assistant notes, tool calls (a command each,
    /// some tools other than bash) with results (an exit status, output with errors).
    fn conversation() -> impl Strategy<Value = Vec<Message>> {
        prop::collection::vec(step(), 1..24).prop_map(|steps| {
            let mut messages = Vec::new();
            let mut calls = 0;
            for step in steps {
                match step {
                    Step::User(text) => messages.push(Message::text(Role::User, text)),
                    Step::Note(text) => messages.push(Message::text(Role::Assistant, text)),
                    Step::Calls(list) => {
                        let mut call = Message::text(Role::Assistant, "");
                        let mut results = Vec::new();
                        for (command, exit, output) in list {
                            calls += 1;
                            let id = format!("c{calls}");
                            let (name, arguments) = if calls % 5 == 0 {
                                ("read_file", serde_json::json!({ "path": command }))
                            } else {
                                ("bash", serde_json::json!({ "command": command }))
                            };
                            call.tool_calls.push(ToolCall {
                                id: id.clone(),
                                name: name.into(),
                                arguments: arguments.to_string(),
                            });
                            let status = exit
                                .map(|s| format!("<returncode>{s}</returncode>\n"))
                                .unwrap_or_default();
                            let mut result = Message::text(Role::Tool, format!("{status}{output}"));
                            result.tool_call_id = id;
                            results.push(result);
                        }
                        messages.push(call);
                        messages.extend(results);
                    }
                }
            }
            messages
        })
    }

    fn leaf(messages: &[Message], target: i64, level: Level) -> String {
        Extractive.summarize(
            &Input {
                messages,
                summaries: &[],
                previous: None,
                first_seq: 1,
                last_seq: messages.len() as i64,
                target_tokens: target,
            },
            level,
            &counter(),
        )
    }

    fn condense(children: &[String], target: i64, level: Level) -> String {
        Extractive.summarize(
            &Input {
                messages: &[],
                summaries: children,
                previous: None,
                first_seq: 1,
                last_seq: 9,
                target_tokens: target,
            },
            level,
            &counter(),
        )
    }

    fn level() -> impl Strategy<Value = Level> {
        prop::sample::select(vec![Level::Normal, Level::Aggressive, Level::Truncation])
    }

    /// Every item a summary lists is in its sources as written there: a tool call's
    /// text begins the command (or arguments) of a call to that tool, an error line, a
    /// path, an identifier, a request or a note is in the sources' text (whitespace
    /// collapsed; a cut item up to its cut).
    fn listed_items_are_in(
        summary: &str,
        sources: &str,
        commands: &[(String, String)],
    ) -> Result<(), TestCaseError> {
        let sources = clip(sources, usize::MAX);
        let listed = Sections::from_summary(summary);
        let uncut = |item: &str| item.trim_end_matches(" …").to_string();
        for call in &listed.calls {
            let text = uncut(&call.text);
            prop_assert!(
                commands
                    .iter()
                    .any(|(tool, command)| *tool == call.tool && command.starts_with(&text)),
                "call {call:?} is no call of the sources:\n{summary}"
            );
        }
        for item in listed
            .errors
            .iter()
            .chain(&listed.requests)
            .chain(&listed.notes)
        {
            prop_assert!(
                sources.contains(&uncut(item)),
                "{item:?} not in the sources:\n{summary}"
            );
        }
        for item in listed
            .paths
            .iter()
            .chain(&listed.seen_paths)
            .chain(&listed.identifiers)
        {
            prop_assert!(
                sources.contains(item.as_str()),
                "{item:?} not in the sources:\n{summary}"
            );
        }
        Ok(())
    }

    fn commands_of(messages: &[Message]) -> Vec<(String, String)> {
        messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .map(|call| {
                (
                    call.name.clone(),
                    clip(&command(&call.arguments), usize::MAX),
                )
            })
            .collect()
    }

    fn text_of_all(messages: &[Message]) -> String {
        let mut text = String::new();
        for message in messages {
            text.push_str(&message.content);
            text.push('\n');
            for call in &message.tool_calls {
                text.push_str(&command(&call.arguments));
                text.push('\n');
            }
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A summary is never larger than its target, whatever the level, and when
        /// the target allows its header, it opens with it.
        #[test]
        fn never_over_the_target(
            messages in conversation(),
            target in 1i64..600,
            level in level(),
        ) {
            let summary = leaf(&messages, target, level);
            prop_assert!(counter().text(&summary) <= target, "{} > {target}:\n{summary}", counter().text(&summary));
            let halves = messages.split_at(messages.len() / 2);
            let children = [leaf(halves.0, 400, Level::Normal), leaf(halves.1, 400, Level::Normal)];
            let condensed = condense(&children, target, level);
            prop_assert!(counter().text(&condensed) <= target);
        }

        /// Whatever a leaf or a condensed summary lists is literally in what it covers.
        #[test]
        fn every_kept_fact_is_in_the_sources(
            messages in conversation(),
            target in 40i64..800,
            level in level(),
        ) {
            let summary = leaf(&messages, target, level);
            let commands = commands_of(&messages);
            listed_items_are_in(&summary, &text_of_all(&messages), &commands)?;
            let halves = messages.split_at(messages.len() / 2);
            let children = [leaf(halves.0, target, level), leaf(halves.1, target, level)];
            let condensed = condense(&children, target / 2 + 20, level);
            listed_items_are_in(&condensed, &children.join("\n"), &commands)?;
        }

        /// Given room, a leaf keeps every command, path, identifier and error line of
        /// its messages, and condensing leaves that kept everything keeps everything.
        #[test]
        fn given_room_every_fact_is_kept(messages in conversation()) {
            let all = facts(&messages, &[]);
            let summary = leaf(&messages, 100_000, Level::Normal);
            let (kept, lost) = retention(&all, &summary);
            prop_assert_eq!((kept.lost(), kept.errors_lost), (0, 0), "lost {:?}:\n{}", lost, summary);
            let halves = messages.split_at(messages.len() / 2);
            let children = [leaf(halves.0, 100_000, Level::Normal), leaf(halves.1, 100_000, Level::Normal)];
            let condensed = condense(&children, 100_000, Level::Normal);
            let (kept, lost) = retention(&all, &condensed);
            prop_assert_eq!((kept.lost(), kept.errors_lost), (0, 0), "lost {:?}:\n{}", lost, condensed);
            // Twice condensed: still everything.
            let again = condense(&[condensed.clone()], 100_000, Level::Normal);
            prop_assert_eq!(retention(&all, &again).0.lost(), 0, "{}", again);
        }

        /// A tighter target keeps fewer facts, never more; a summary's facts survive
        /// condensation as far as the condensed target allows (with the children's
        /// total size as target, everything).
        #[test]
        fn condensation_keeps_what_its_parts_kept(
            messages in conversation(),
            target in 60i64..400,
        ) {
            let halves = messages.split_at(messages.len() / 2);
            let children = [leaf(halves.0, target, Level::Normal), leaf(halves.1, target, Level::Normal)];
            let kept_by_children = facts(&[], &children);
            let room: i64 = children.iter().map(|c| counter().text(c)).sum::<i64>() + 20;
            let condensed = condense(&children, room, Level::Normal);
            let (kept, lost) = retention(&kept_by_children, &condensed);
            prop_assert_eq!((kept.lost(), kept.errors_lost), (0, 0), "lost {:?}:\n{}", lost, condensed);
            let smaller = condense(&children, room / 2, Level::Normal);
            prop_assert!(retention(&kept_by_children, &smaller).0.lost() >= kept.lost());
        }
    }
}
