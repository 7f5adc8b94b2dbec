//! Retention facts: what a request should still show of the messages it no longer
//! carries verbatim. One extraction for every strategy: ctxd's summary-retention facts
//! (file paths, the first 60 characters of each command, code identifiers of the user,
//! the assistant and its commands, error lines of tool output), and among the paths
//! those acted on (named by the user, the assistant or a tool call, not only shown in
//! tool output). A fact is retained when it appears in the request's text, whitespace
//! collapsed, anywhere.
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use ctxd_core::message::{Message, Role};
use ctxd_core::summarize::paths;

/// Kinds of facts. The last, acted-on paths, is a part of the paths counted again on its
/// own: the share of all kinds together leaves it out.
pub const KINDS: [&str; 5] = [
    "commands",
    "paths",
    "identifiers",
    "errors",
    "acted-on paths",
];

/// The kind of the acted-on paths.
pub const ACTED: usize = 4;

/// The facts of one recorded session, indexed for quick checks.
pub struct SessionFacts {
    /// (kind, text) of every distinct fact.
    pub facts: Vec<(usize, String)>,
    /// Fact ids of each recorded message.
    pub of_message: Vec<Vec<u32>>,
    /// Per fact, the recorded messages whose text contains it.
    pub found_in: Vec<Vec<u32>>,
    /// Recorded messages by [`key`].
    by_key: HashMap<u64, Vec<u32>>,
    pub messages: Vec<Message>,
}

/// Whitespace collapsed to single spaces.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A tool call's command (its `command` or `cmd` argument), else its arguments.
pub fn command(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => match map.get("command").or_else(|| map.get("cmd")) {
            Some(serde_json::Value::String(command)) => command.clone(),
            _ => arguments.to_string(),
        },
        _ => arguments.to_string(),
    }
}

/// The text of a message a fact is looked for in: its content and its calls' commands,
/// whitespace collapsed.
pub fn searchable(message: &Message) -> String {
    let mut text = message.content.clone();
    for call in &message.tool_calls {
        text.push('\n');
        text.push_str(&command(&call.arguments));
    }
    collapse(&text)
}

/// Identifies a message by what a request carries of it: role, content, calls, answer.
pub fn key(message: &Message) -> u64 {
    let mut hasher = DefaultHasher::new();
    (message.role as i32).hash(&mut hasher);
    message.content.hash(&mut hasher);
    message.tool_call_id.hash(&mut hasher);
    for call in &message.tool_calls {
        (&call.id, &call.name, &call.arguments).hash(&mut hasher);
    }
    hasher.finish()
}

fn same(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && a.content == b.content
        && a.tool_call_id == b.tool_call_id
        && a.tool_calls == b.tool_calls
}

/// Every fact of one message, by kind.
pub fn message_facts(message: &Message) -> Vec<(usize, String)> {
    let summary = ctxd_core::summarize::facts(std::slice::from_ref(message), &[]);
    let mut facts: Vec<(usize, String)> = Vec::new();
    facts.extend(summary.commands.into_iter().map(|f| (0, collapse(&f))));
    facts.extend(summary.paths.into_iter().map(|f| (1, f)));
    facts.extend(summary.identifiers.into_iter().map(|f| (2, f)));
    facts.extend(summary.errors.into_iter().map(|f| (3, f)));
    if message.role != Role::Tool {
        let mut acted = paths(&message.content);
        for call in &message.tool_calls {
            acted.extend(paths(&call.arguments));
        }
        acted.sort();
        acted.dedup();
        facts.extend(acted.into_iter().map(|f| (ACTED, f)));
    }
    facts.retain(|(_, fact)| !fact.is_empty());
    facts
}

impl SessionFacts {
    pub fn new(messages: &[Message]) -> SessionFacts {
        let texts: Vec<String> = messages.iter().map(searchable).collect();
        let mut ids: HashMap<(usize, String), u32> = HashMap::new();
        let mut facts = Vec::new();
        let mut of_message = Vec::new();
        for message in messages {
            let mut own = Vec::new();
            for fact in message_facts(message) {
                let id = *ids.entry(fact.clone()).or_insert_with(|| {
                    facts.push(fact);
                    (facts.len() - 1) as u32
                });
                if !own.contains(&id) {
                    own.push(id);
                }
            }
            of_message.push(own);
        }
        let found_in = facts
            .iter()
            .map(|(_, fact)| {
                (0..texts.len() as u32)
                    .filter(|&i| texts[i as usize].contains(fact.as_str()))
                    .collect()
            })
            .collect();
        let mut by_key: HashMap<u64, Vec<u32>> = HashMap::new();
        for (index, message) in messages.iter().enumerate() {
            by_key.entry(key(message)).or_default().push(index as u32);
        }
        SessionFacts {
            facts,
            of_message,
            found_in,
            by_key,
            messages: messages.to_vec(),
        }
    }

    /// The recorded message (among the first `history`) that `message` is verbatim, if
    /// any, not one already claimed.
    pub fn verbatim(&self, message: &Message, history: usize, claimed: &[bool]) -> Option<usize> {
        self.by_key
            .get(&key(message))?
            .iter()
            .map(|&i| i as usize)
            .find(|&i| i < history && !claimed[i] && same(&self.messages[i], message))
    }
}

/// Facts counted at one build, by kind: how many were due (their message is no longer
/// verbatim) and how many of those the request still shows; summed over builds, with
/// the sum of each build's kept / due (by kind, then all kinds but the acted-on paths,
/// which the paths include: index [`ALL`]) and how many builds had any due, for the mean
/// over builds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Count {
    pub due: [u64; KINDS.len()],
    pub kept: [u64; KINDS.len()],
    pub ratio_sum: [f64; ALL + 1],
    pub ratio_builds: [u64; ALL + 1],
}

/// Where [`Count`] keeps the share of all kinds together.
pub const ALL: usize = KINDS.len();

impl Count {
    pub fn add(&mut self, other: &Count) {
        for kind in 0..KINDS.len() {
            self.due[kind] += other.due[kind];
            self.kept[kind] += other.kept[kind];
        }
        for kind in 0..=ALL {
            self.ratio_sum[kind] += other.ratio_sum[kind];
            self.ratio_builds[kind] += other.ratio_builds[kind];
        }
    }

    /// Adds one build's count, and its share kept to the means.
    pub fn add_build(&mut self, build: &Count) {
        self.add(build);
        let all = (
            build.due[..ACTED].iter().sum::<u64>(),
            build.kept[..ACTED].iter().sum::<u64>(),
        );
        for (kind, (due, kept)) in (0..KINDS.len())
            .map(|kind| (build.due[kind], build.kept[kind]))
            .chain(std::iter::once(all))
            .enumerate()
        {
            if due > 0 {
                self.ratio_sum[kind] += kept as f64 / due as f64;
                self.ratio_builds[kind] += 1;
            }
        }
    }

    /// The mean over builds with facts due of the share kept, in percent (`None`: all
    /// kinds together).
    pub fn mean_pct(&self, kind: Option<usize>) -> Option<f64> {
        let kind = kind.unwrap_or(ALL);
        (self.ratio_builds[kind] > 0)
            .then(|| self.ratio_sum[kind] * 100.0 / self.ratio_builds[kind] as f64)
    }
}

/// Keeps `text` under its hash in `texts` and lists the hash in `derived`.
fn remember(text: String, derived: &mut Vec<u64>, texts: &mut HashMap<u64, String>) {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let id = hasher.finish();
    texts.entry(id).or_insert(text);
    derived.push(id);
}

/// Checks facts against texts that are not recorded messages (summaries, placeholders,
/// previews, system prompts with summaries), remembering each answer.
#[derive(Default)]
pub struct Checker {
    texts: HashMap<u64, String>,
    answers: HashMap<(u32, u64), bool>,
}

impl Checker {
    /// Counts the facts of the first `history` recorded messages that `messages` (a
    /// request, after `system`) no longer carries verbatim, and those it still shows.
    pub fn count(
        &mut self,
        session: &SessionFacts,
        history: usize,
        system: &str,
        messages: &[Message],
    ) -> Count {
        self.check(session, history, system, messages).0
    }

    /// The facts due and not kept, by id.
    pub fn lost(
        &mut self,
        session: &SessionFacts,
        history: usize,
        system: &str,
        messages: &[Message],
    ) -> Vec<u32> {
        self.check(session, history, system, messages).1
    }

    fn check(
        &mut self,
        session: &SessionFacts,
        history: usize,
        system: &str,
        messages: &[Message],
    ) -> (Count, Vec<u32>) {
        let mut claimed = vec![false; history];
        let mut derived: Vec<u64> = Vec::new();
        remember(collapse(system), &mut derived, &mut self.texts);
        for message in messages {
            match session.verbatim(message, history, &claimed) {
                Some(index) => claimed[index] = true,
                None => remember(searchable(message), &mut derived, &mut self.texts),
            }
        }
        let mut due = vec![false; session.facts.len()];
        for index in (0..history).filter(|&i| !claimed[i]) {
            for &fact in &session.of_message[index] {
                due[fact as usize] = true;
            }
        }
        let mut count = Count::default();
        let mut lost = Vec::new();
        for (fact, _) in due.iter().enumerate().filter(|(_, due)| **due) {
            let (kind, text) = &session.facts[fact];
            count.due[*kind] += 1;
            let verbatim = session.found_in[fact]
                .iter()
                .any(|&i| (i as usize) < history && claimed[i as usize]);
            let kept = verbatim
                || derived.iter().any(|id| {
                    *self
                        .answers
                        .entry((fact as u32, *id))
                        .or_insert_with(|| self.texts[id].contains(text.as_str()))
                });
            count.kept[*kind] += u64::from(kept);
            // An acted-on path is a path too: asked about once.
            if !kept && *kind != ACTED {
                lost.push(fact as u32);
            }
        }
        (count, lost)
    }
}
