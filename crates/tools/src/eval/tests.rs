//! Each strategy's trigger on a synthetic session (it must fire at the documented point
//! and not before), the fact extractor, retention counting and orphan counting.
use ctxd_core::message::{Message, Role, ToolCall};

use super::bash_tool;
use super::context_editing::ContextEditing;
use super::deepagents::{self, DeepAgents};
use super::facts::{ACTED, Checker, SessionFacts, message_facts};
use super::meter::orphans;
use super::seahorse::{FRESH_TAIL_MESSAGES, LEAF_CHUNK_MESSAGES, Seahorse};
use super::strategies::{Codex, OPENCODE_PRUNED, OpenCode, Setup, Strategy};

const SYSTEM: &str = "You are a helpful assistant that can run bash commands.";
const WINDOW: i64 = 8_000;

fn setup() -> Setup {
    Setup::new(WINDOW, SYSTEM, &[bash_tool()]).unwrap()
}

fn words(n: usize, seed: usize) -> String {
    (0..n).map(|i| format!("w{} ", (i + seed) % 97)).collect()
}

/// A task, then `steps` steps: an assistant message of `thought` words calling bash,
/// and a result of `output` words.
fn session(steps: usize, thought: usize, output: usize) -> Vec<Message> {
    let mut messages = vec![Message::text(
        Role::User,
        "Fix the bug in django/db/models/query.py",
    )];
    for step in 0..steps {
        messages.push(Message {
            tool_calls: vec![ToolCall {
                id: format!("call_{step}"),
                name: "bash".into(),
                arguments: format!(r#"{{"command":"cat src/module_{step}.py"}}"#),
            }],
            ..Message::text(Role::Assistant, words(thought, step))
        });
        messages.push(Message {
            tool_call_id: format!("call_{step}"),
            ..Message::text(Role::Tool, words(output, step * 7))
        });
    }
    messages
}

/// Steps (history lengths) at which requests are built: before each assistant message.
fn steps(messages: &[Message]) -> Vec<usize> {
    (0..messages.len())
        .filter(|&i| messages[i].role == Role::Assistant)
        .chain(std::iter::once(messages.len()))
        .collect()
}

/// The whole history's tokens, as a request without compaction.
fn uncompacted(setup: &Setup, history: &[Message]) -> i64 {
    setup.fixed_tokens
        + history
            .iter()
            .map(|m| setup.counter.message(m))
            .sum::<i64>()
}

/// The first history length at which `strategy` sent something other than the
/// history verbatim, and that request.
fn first_change(strategy: &mut dyn Strategy, messages: &[Message]) -> (usize, Vec<Message>) {
    for step in steps(messages) {
        let build = strategy.build(&messages[..step]);
        assert_eq!(build.system, SYSTEM);
        if build.messages != messages[..step] {
            return (step, build.messages);
        }
    }
    panic!("the strategy never compacted");
}

/// The first history length whose uncompacted request exceeds `threshold` tokens.
fn first_over(messages: &[Message], threshold: i64) -> usize {
    let setup = setup();
    steps(messages)
        .into_iter()
        .find(|&step| uncompacted(&setup, &messages[..step]) > threshold)
        .expect("the session outgrows the threshold")
}

#[test]
fn opencode_summarizes_everything_past_85_percent() {
    // Long thoughts, tiny outputs: pruning has nothing worth pruning.
    let messages = session(60, 120, 2);
    let setup = setup();
    let (step, request) = first_change(&mut OpenCode::new(setup.clone(), SYSTEM), &messages);
    assert_eq!(step, first_over(&messages, setup.fraction(0.85)));
    assert_eq!(request.len(), 1, "one summary of everything");
    assert!(
        request[0].content.contains("src/module_0.py"),
        "{}",
        request[0].content
    );
}

#[test]
fn opencode_prunes_beyond_the_protected_output_when_it_saves_the_minimum() {
    let messages = session(40, 5, 150);
    let setup = setup();
    let protect = setup.effective.tool_output_protect_tokens;
    let minimum = setup.effective.clear_min_savings_tokens;
    // Expected: the first step where the outputs older than the newest `protect`
    // tokens of outputs add up to `minimum`.
    let expected = steps(&messages)
        .into_iter()
        .find(|&step| {
            let (mut total, mut prunable) = (0, 0);
            for message in messages[..step]
                .iter()
                .rev()
                .filter(|m| m.role == Role::Tool)
            {
                let tokens = setup.counter.message(message);
                total += tokens;
                if total > protect {
                    prunable += tokens;
                }
            }
            prunable >= minimum
        })
        .unwrap();
    let (step, request) = first_change(&mut OpenCode::new(setup.clone(), SYSTEM), &messages);
    assert_eq!(step, expected);
    assert!(step < first_over(&messages, setup.fraction(0.85)));
    assert!(request.iter().any(|m| m.content == OPENCODE_PRUNED));
    assert_eq!(request.len(), step, "pruning keeps every message");
}

#[test]
fn codex_summarizes_past_90_percent_after_the_user_messages() {
    let messages = session(60, 120, 2);
    let setup = setup();
    let (step, request) = first_change(&mut Codex::new(setup.clone(), SYSTEM), &messages);
    assert_eq!(step, first_over(&messages, setup.fraction(0.90)));
    assert_eq!(request.len(), 2);
    assert_eq!(
        request[0], messages[0],
        "the user's request is kept as written"
    );
    assert!(request[1].content.starts_with("Summary of conversation"));
}

#[test]
fn deepagents_clears_past_60_percent_keeping_3_results_and_summarizes_at_85() {
    let messages = session(60, 120, 20);
    let setup = setup();
    let mut strategy = DeepAgents::new(setup.clone(), SYSTEM);
    let (step, request) = first_change(&mut strategy, &messages);
    assert_eq!(step, first_over(&messages, setup.fraction(0.60)));
    let results: Vec<&Message> = request.iter().filter(|m| m.role == Role::Tool).collect();
    let kept = results
        .iter()
        .filter(|m| m.content != deepagents::CLEARED)
        .count();
    assert_eq!(kept, 3, "the newest 3 results stay");
    // Clearing edits the request only: the summary comes when the stored history
    // passes 85 %.
    let mut strategy = DeepAgents::new(setup.clone(), SYSTEM);
    let summarized = steps(&messages)
        .into_iter()
        .find(|&step| {
            let build = strategy.build(&messages[..step]);
            build.messages[0]
                .content
                .starts_with(deepagents::SUMMARY_PREFIX)
        })
        .unwrap();
    assert_eq!(summarized, first_over(&messages, setup.fraction(0.85)));
}

#[test]
fn deepagents_evicts_a_large_result_to_its_first_lines() {
    let mut messages = session(1, 5, 0);
    let big: String = (0..400)
        .map(|i| format!("line {i} {}\n", words(10, i)))
        .collect();
    messages[2].content = big;
    let build = DeepAgents::new(setup(), SYSTEM).build(&messages);
    let result = &build.messages[2].content;
    assert!(result.starts_with("Tool result too large"), "{result}");
    assert!(
        result.contains("line 9 ") && !result.contains("line 10 "),
        "{result}"
    );
}

#[test]
fn seahorse_makes_leaves_outside_the_fresh_tail_past_75_percent() {
    let messages = session(60, 40, 20);
    let setup = setup();
    let (step, request) = first_change(&mut Seahorse::new(setup.clone(), SYSTEM), &messages);
    assert_eq!(step, first_over(&messages, setup.fraction(0.75)));
    assert!(
        request[0]
            .content
            .starts_with("Summary of conversation messages 1-")
    );
    let covered = step - (request.len() - 1);
    assert!(covered >= 1, "a leaf covers messages");
    assert!(
        request.len() > FRESH_TAIL_MESSAGES,
        "the fresh tail stays whole"
    );
    assert_eq!(
        request[request.len() - FRESH_TAIL_MESSAGES..],
        messages[step - FRESH_TAIL_MESSAGES..step]
    );
    // Leaves are made one chunk (at most 8 messages and one whole step) at a time.
    let leaves = request
        .iter()
        .filter(|m| m.content.starts_with("Summary of"))
        .count();
    assert!(
        covered <= leaves * (LEAF_CHUNK_MESSAGES + 1),
        "{covered} in {leaves}"
    );
}

#[test]
fn context_editing_clears_past_half_the_window_only_when_it_saves_the_minimum() {
    let messages = session(40, 5, 150);
    let setup = setup();
    let (step, request) = first_change(&mut ContextEditing::new(setup.clone(), SYSTEM), &messages);
    assert_eq!(step, first_over(&messages, WINDOW / 2));
    let kept = request
        .iter()
        .filter(|m| m.role == Role::Tool && m.content != super::context_editing::CLEARED)
        .count();
    assert_eq!(kept, 3);
    // Small results: clearing them all saves something, but less than the minimum, so
    // nothing is cleared.
    let messages = session(60, 120, 6);
    let placeholder = setup.counter.text(super::context_editing::CLEARED);
    let saving: i64 = messages[..messages.len() - 6]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| setup.counter.text(&m.content) - placeholder)
        .sum();
    assert!(
        saving > 0 && saving < setup.effective.clear_min_savings_tokens,
        "{saving}"
    );
    let mut strategy = ContextEditing::new(setup, SYSTEM);
    for step in steps(&messages) {
        assert_eq!(strategy.build(&messages[..step]).messages, messages[..step]);
    }
}

#[test]
fn facts_are_commands_paths_identifiers_and_error_lines() {
    let call = Message {
        tool_calls: vec![ToolCall {
            id: "c".into(),
            name: "bash".into(),
            arguments: r#"{"command":"python   manage.py test --settings=test_sqlite"}"#.into(),
        }],
        ..Message::text(Role::Assistant, "Now check QuerySet and get_prep_value")
    };
    let facts = message_facts(&call);
    assert!(
        facts.contains(&(0, "python manage.py test --settings=test_sqlite".into())),
        "{facts:?}"
    );
    assert!(facts.contains(&(2, "QuerySet".into())), "{facts:?}");
    assert!(facts.contains(&(2, "get_prep_value".into())), "{facts:?}");
    // A path the assistant names is acted on; one only tool output shows is not.
    let named = message_facts(&Message::text(Role::Assistant, "Edit django/db/query.py"));
    assert!(
        named.contains(&(1, "django/db/query.py".into())),
        "{named:?}"
    );
    assert!(
        named.contains(&(ACTED, "django/db/query.py".into())),
        "{named:?}"
    );
    let shown = message_facts(&Message::text(Role::Tool, "./django/db/query.py:12: def f"));
    assert!(
        shown.contains(&(1, "./django/db/query.py:12".into())),
        "{shown:?}"
    );
    assert!(!shown.iter().any(|(kind, _)| *kind == ACTED), "{shown:?}");
    // A tool result's error lines (as `summarize::facts` finds them) are its error facts.
    let output = "Traceback (most recent call last):\n  File \"x.py\", line 1\n    boom()\nKeyError: 'name'\nok";
    let errors: Vec<String> = message_facts(&Message::text(Role::Tool, output))
        .into_iter()
        .filter(|(kind, _)| *kind == 3)
        .map(|(_, fact)| fact)
        .collect();
    assert_eq!(errors, vec!["KeyError: 'name'"]);
}

#[test]
fn retention_counts_the_facts_of_what_is_no_longer_verbatim() {
    let messages = session(2, 5, 5);
    let facts = SessionFacts::new(&messages);
    let mut checker = Checker::default();
    // Everything verbatim: nothing is due.
    let whole = checker.count(&facts, messages.len(), SYSTEM, &messages);
    assert_eq!(whole.due.iter().sum::<u64>(), 0);
    // The first step dropped, its command and path kept by a summary.
    let summary = Message::text(Role::User, "Summary: ran cat src/module_0.py");
    let mut request = vec![messages[0].clone(), summary];
    request.extend_from_slice(&messages[3..]);
    let count = checker.count(&facts, messages.len(), SYSTEM, &request);
    assert_eq!(count.due[0], 1, "one command due");
    assert_eq!(count.kept[0], 1, "the summary has it");
    assert_eq!(count.due[1], 1, "one path due");
    assert_eq!(count.kept[1], 1);
    // Dropped with no summary: lost.
    let mut request = vec![messages[0].clone()];
    request.extend_from_slice(&messages[3..]);
    let count = checker.count(&facts, messages.len(), SYSTEM, &request);
    assert_eq!((count.due[0], count.kept[0]), (1, 0));
    // The mean is over builds with facts due: all commands kept in one, none in the
    // other, 50 %.
    let mut totals = super::facts::Count::default();
    totals.add_build(&whole);
    totals.add_build(&checker.count(&facts, messages.len(), SYSTEM, &{
        let mut request = vec![
            messages[0].clone(),
            Message::text(Role::User, "cat src/module_0.py"),
        ];
        request.extend_from_slice(&messages[3..]);
        request
    }));
    totals.add_build(&count);
    assert_eq!(totals.mean_pct(Some(0)), Some(50.0));
}

#[test]
fn orphans_are_results_without_calls_and_calls_without_results() {
    let messages = session(2, 1, 1);
    assert_eq!(orphans(&messages), 0);
    assert_eq!(orphans(&messages[..2]), 1, "a call left open");
    let mut without_call = vec![messages[0].clone()];
    without_call.extend_from_slice(&messages[2..]);
    assert_eq!(orphans(&without_call), 1, "a result without its call");
}

#[test]
fn a_sessions_project_is_its_repository_without_the_issue() {
    assert_eq!(super::project_of("django__django-11099"), "django");
    assert_eq!(
        super::project_of("pvlib__pvlib-python-1072"),
        "pvlib-python"
    );
    assert_eq!(super::project_of("pylint-dev__astroid-1196"), "astroid");
    assert_eq!(super::project_of("plain"), "plain");
}
