//! The retention check: the facts due from a span (its raw messages, or the summaries it
//! condenses, read back by their sections) and what a summary of it kept.
use std::collections::BTreeSet;

use crate::message::{Message, Role};

use super::facts::{
    Facts, Retention, command, command_fact, error_lines, identifiers, paths, text_of,
};
use super::sections::Sections;
use super::{body, clip};

/// The facts of a span: its messages (leaf) or the summaries it condenses (condensed:
/// what their text lists).
pub fn facts(messages: &[Message], children: &[String]) -> Facts {
    let mut facts = Facts::default();
    for message in messages {
        let text = text_of(message);
        facts.paths.extend(paths(&text));
        if message.role == Role::Tool {
            facts.errors.extend(error_lines(&text));
        } else {
            facts.identifiers.extend(identifiers(&text));
        }
        for call in &message.tool_calls {
            facts.paths.extend(paths(&call.arguments));
            let command = command(&call.arguments);
            facts.identifiers.extend(identifiers(&command));
            facts.commands.insert(command_fact(&command));
        }
    }
    for child in children {
        let text = body(child);
        facts.paths.extend(paths(text));
        facts.identifiers.extend(identifiers(text));
        let sections = Sections::from_summary(child);
        facts
            .commands
            .extend(sections.calls.iter().map(|c| command_fact(&c.text)));
        facts
            .errors
            .extend(sections.errors.iter().filter_map(|error| {
                let error = error.trim_end_matches(" …");
                (!error.is_empty()).then(|| error.to_string())
            }));
    }
    facts.commands.remove("");
    facts
}

/// What `summary` keeps of `facts`, and the facts it lost (commands, error lines,
/// paths, then identifiers).
pub fn retention<'a>(facts: &'a Facts, summary: &str) -> (Retention, Vec<&'a str>) {
    let collapsed = clip(summary, usize::MAX);
    let mut lost = Vec::new();
    let mut count = |set: &'a BTreeSet<String>, whole: &str| {
        let before = lost.len();
        lost.extend(
            set.iter()
                .map(String::as_str)
                .filter(|fact| !whole.contains(fact)),
        );
        (set.len() as i64, (lost.len() - before) as i64)
    };
    let (commands, commands_lost) = count(&facts.commands, &collapsed);
    let (errors, errors_lost) = count(&facts.errors, &collapsed);
    let (paths, paths_lost) = count(&facts.paths, summary);
    let (identifiers, identifiers_lost) = count(&facts.identifiers, summary);
    (
        Retention {
            paths,
            paths_lost,
            commands,
            commands_lost,
            identifiers,
            identifiers_lost,
            errors,
            errors_lost,
        },
        lost,
    )
}
