//! Writing a summary's parts within its target: every item is weighed in tokens and
//! taken by priority — the first and the newest request, then tool calls, error lines,
//! files and identifiers in turns (newest first), then the rest — and the text is
//! checked with the tokenizer, dropping the last items taken until it fits. A name or a
//! path another line already shows gets no entry of its own.
use crate::tokenize::Counter;

use super::Level;
use super::sections::{
    ERRORS, FILES, IDENTIFIERS, NOTES, OMITTED, REQUESTS, SEEN_FILES, Sections, calls_heading,
    exit_suffix,
};
use super::{CONTINUES, clip, fit};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Request,
    Call,
    Error,
    Path,
    SeenPath,
    Identifier,
    Note,
}

const KINDS: [Kind; 7] = [
    Kind::Request,
    Kind::Call,
    Kind::Error,
    Kind::Path,
    Kind::SeenPath,
    Kind::Identifier,
    Kind::Note,
];

impl Kind {
    /// Listed inline ("Files: a, b") rather than one per line.
    fn inline(self) -> bool {
        matches!(self, Kind::Path | Kind::SeenPath | Kind::Identifier)
    }

    fn heading(self) -> &'static str {
        match self {
            Kind::Request => REQUESTS,
            Kind::Call => "",
            Kind::Error => ERRORS,
            Kind::Path => FILES,
            Kind::SeenPath => SEEN_FILES,
            Kind::Identifier => IDENTIFIERS,
            Kind::Note => NOTES,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Request => "requests",
            Kind::Call => "tool calls",
            Kind::Error => "error lines",
            Kind::Path => "files",
            Kind::SeenPath => "files seen in output",
            Kind::Identifier => "identifiers",
            Kind::Note => "notes",
        }
    }
}

/// Per level: characters of a request, characters of a note, notes at most.
fn caps(level: Level) -> (usize, usize, usize) {
    match level {
        Level::Normal => (300, 200, usize::MAX),
        Level::Aggressive | Level::Truncation => (160, 120, 1),
    }
}

/// The items of each kind as shown, oldest first.
struct Shown {
    lists: [Vec<String>; 7],
    tools: Vec<String>,
}

impl Shown {
    fn new(sections: &Sections, level: Level) -> Shown {
        let (request_chars, note_chars, _) = caps(level);
        let lists = KINDS.map(|kind| match kind {
            Kind::Request => sections
                .requests
                .iter()
                .map(|r| clip(r, request_chars))
                .collect(),
            Kind::Call => sections
                .calls
                .iter()
                .map(|c| format!("{}{}", c.text, exit_suffix(c.exit)))
                .collect(),
            Kind::Error => sections.errors.clone(),
            Kind::Path => sections.paths.clone(),
            Kind::SeenPath => sections.seen_paths.clone(),
            Kind::Identifier => sections.identifiers.clone(),
            Kind::Note => sections.notes.iter().map(|n| clip(n, note_chars)).collect(),
        });
        Shown {
            lists,
            tools: sections.calls.iter().map(|c| c.tool.clone()).collect(),
        }
    }

    fn item(&self, (kind, index): (Kind, usize)) -> &str {
        &self.lists[kind as usize][index]
    }
}

/// The order items are considered in: the first and the newest request; then turns of a
/// tool call, an error line, a file and an identifier, the other requests among them
/// (each newest first), the newest note in the first turn; then the other notes and the
/// files only seen in output.
fn priority(shown: &Shown, level: Level) -> Vec<(Kind, usize)> {
    let len = |kind: Kind| shown.lists[kind as usize].len();
    let newest_first = |kind: Kind| (0..len(kind)).rev().map(move |index| (kind, index));
    let mut order = Vec::new();
    let requests = len(Kind::Request);
    if requests > 0 {
        order.push((Kind::Request, 0));
    }
    if requests > 1 {
        order.push((Kind::Request, requests - 1));
    }
    let (_, _, notes) = caps(level);
    let notes_taken: Vec<(Kind, usize)> = newest_first(Kind::Note).take(notes).collect();
    let turns: Vec<Box<dyn Iterator<Item = (Kind, usize)>>> = vec![
        Box::new(newest_first(Kind::Call)),
        Box::new(newest_first(Kind::Error)),
        Box::new(newest_first(Kind::Path)),
        Box::new(newest_first(Kind::Identifier)),
        Box::new(newest_first(Kind::Request).filter(move |&(_, i)| i > 0 && i + 1 < requests)),
        Box::new(notes_taken.first().copied().into_iter()),
    ];
    round_robin(&mut order, turns);
    let rest: Vec<Box<dyn Iterator<Item = (Kind, usize)>>> = vec![
        Box::new(notes_taken.into_iter().skip(1)),
        Box::new(newest_first(Kind::SeenPath)),
    ];
    round_robin(&mut order, rest);
    order
}

fn round_robin<'a>(
    order: &mut Vec<(Kind, usize)>,
    mut turns: Vec<Box<dyn Iterator<Item = (Kind, usize)> + 'a>>,
) {
    loop {
        let mut any = false;
        for turn in &mut turns {
            if let Some(item) = turn.next() {
                order.push(item);
                any = true;
            }
        }
        if !any {
            return;
        }
    }
}

/// The summary's text: `header`, the task, then the items `taken`, each part in log
/// order, and a line counting what was left out.
fn render(
    header: &str,
    task: &str,
    shown: &Shown,
    taken: &[(Kind, usize)],
    omitted: &str,
) -> String {
    let mut text = format!("{header}\n{task}");
    for kind in KINDS {
        let mut indices: Vec<usize> = taken
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|&(_, index)| index)
            .collect();
        if indices.is_empty() {
            continue;
        }
        indices.sort_unstable();
        if kind.inline() {
            let items: Vec<&str> = indices.iter().map(|&i| shown.item((kind, i))).collect();
            text.push_str(&format!("{} {}\n", kind.heading(), items.join(", ")));
            continue;
        }
        let mut tool: Option<&str> = None;
        if kind != Kind::Call {
            text.push_str(kind.heading());
            text.push('\n');
        }
        for index in indices {
            if kind == Kind::Call && tool != Some(shown.tools[index].as_str()) {
                tool = Some(shown.tools[index].as_str());
                text.push_str(&calls_heading(&shown.tools[index]));
                text.push('\n');
            }
            text.push_str("- ");
            text.push_str(shown.item((kind, index)));
            text.push('\n');
        }
    }
    text.push_str(omitted);
    text
}

/// What an item adds to the text, in tokens (its part's heading when it is the first).
fn cost(shown: &Shown, item: (Kind, usize), first: bool, counter: &Counter) -> i64 {
    let (kind, index) = item;
    let text = shown.item(item);
    let heading = match (kind, first) {
        (Kind::Call, true) => counter.text(&calls_heading(&shown.tools[index])) + 1,
        (_, true) if !kind.inline() => counter.text(kind.heading()) + 1,
        _ => 0,
    };
    let line = match (kind.inline(), first) {
        (true, true) => counter.text(&format!("{} {text}\n", kind.heading())),
        (true, false) => counter.text(&format!(", {text}")),
        (false, _) => counter.text(&format!("- {text}\n")),
    };
    heading + line
}

/// The sections as a summary of at most `target` tokens.
pub(super) fn compose(
    sections: &Sections,
    header: &str,
    level: Level,
    target: i64,
    counter: &Counter,
) -> String {
    let (request_chars, _, _) = caps(level);
    let task = sections.task.as_ref().map_or_else(String::new, |task| {
        format!("{CONTINUES}{}\n", clip(task, request_chars))
    });
    let head = format!("{header}\n{task}");
    let fixed = counter.text(&head);
    if fixed >= target {
        return fit(head, target, counter);
    }
    let shown = Shown::new(sections, level);
    let order = priority(&shown, level);
    let mut taken: Vec<(Kind, usize)> = Vec::new();
    let mut written = head.clone();
    let mut used = fixed;
    let mut skipped: Vec<(Kind, usize)> = Vec::new();
    // Again while names a later line shows free room and items wait for it: each round
    // drops at least one taken item for good, so the rounds end.
    for round in 0.. {
        let candidates = if round == 0 {
            order.clone()
        } else {
            std::mem::take(&mut skipped)
        };
        for item in candidates {
            let text = shown.item(item);
            if item.0.inline() && written.contains(text) {
                continue;
            }
            let first = match item.0 {
                Kind::Call => !taken
                    .iter()
                    .any(|&(k, i)| k == Kind::Call && shown.tools[i] == shown.tools[item.1]),
                kind => !taken.iter().any(|&(k, _)| k == kind),
            };
            let cost = cost(&shown, item, first, counter);
            if used + cost > target {
                skipped.push(item);
                continue;
            }
            used += cost;
            taken.push(item);
            written.push_str(text);
            written.push('\n');
        }
        // Names and paths that lines taken later show need no entry of their own.
        let others = |this: (Kind, usize)| {
            taken
                .iter()
                .filter(|&&other| other != this)
                .any(|&other| shown.item(other).contains(shown.item(this)))
        };
        let redundant: Vec<(Kind, usize)> = taken
            .iter()
            .copied()
            .filter(|&item| item.0.inline() && others(item))
            .collect();
        if redundant.is_empty() {
            break;
        }
        taken.retain(|item| !redundant.contains(item));
        used = counter.text(&render(header, &task, &shown, &taken, ""));
        if skipped.is_empty() {
            break;
        }
    }
    // Items come before the line counting what is left out.
    loop {
        let text = render(header, &task, &shown, &taken, &omitted(&shown, &taken));
        if counter.text(&text) <= target {
            return text;
        }
        let text = render(header, &task, &shown, &taken, "");
        if counter.text(&text) <= target {
            return text;
        }
        if taken.pop().is_none() {
            return fit(text, target, counter);
        }
    }
}

/// The line counting the items not shown (none when every item is, in a line of its own
/// or within another).
fn omitted(shown: &Shown, taken: &[(Kind, usize)]) -> String {
    let text: String = taken
        .iter()
        .map(|&item| shown.item(item))
        .collect::<Vec<_>>()
        .join("\n");
    let counts: Vec<String> = KINDS
        .iter()
        .filter_map(|&kind| {
            let missing = (0..shown.lists[kind as usize].len())
                .filter(|&index| !taken.contains(&(kind, index)))
                .filter(|&index| !(kind.inline() && text.contains(shown.item((kind, index)))))
                .count();
            (missing > 0).then(|| format!("{} {missing}", kind.noun()))
        })
        .collect();
    if counts.is_empty() {
        return String::new();
    }
    format!("{OMITTED} {}.\n", counts.join(", "))
}

#[cfg(test)]
mod tests;
