//! The ledger as the model reads it: the client's todos and notes, and the files,
//! commands and errors of messages the view no longer shows verbatim, within a token
//! cap. When the cap is reached the oldest entries fold into counts ("… and 14 earlier
//! files"): an entry is listed or counted, never dropped silently.
//!
//! What a derived entry shows depends only on its seqs the view hides (and the runs
//! whose result is hidden), so appending messages — which only adds seqs the view shows
//! — never changes the block: it changes when compaction moves or clears the view, or
//! when the client changes its todos or notes.
use std::collections::BTreeMap;

use super::{Entry, Kind, TodoStatus};

/// Heading of the block.
pub const HEADING: &str = "Task ledger (kept by ctxd; it survives compaction):";

/// One entry as rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    kind: Kind,
    line: String,
    /// Fold order within the kind and for derived entries across kinds: oldest first.
    age: (i64, i64),
    done: bool,
}

/// The rendered ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub text: String,
    pub tokens: i64,
    /// Entries listed by kind.
    pub listed: BTreeMap<Kind, usize>,
    /// Entries folded into counts by kind.
    pub folded: BTreeMap<Kind, usize>,
}

/// Whether a summary's text (`summaries`) already names the entry as it is, so the block
/// need not list it: a derived entry (file, error, command) whose key a summary
/// contains — except a command whose last hidden run failed, which stays for its exit
/// status. Only hidden runs count (as in [`render`]), so an append never changes it.
pub fn left_to_summaries(entry: &Entry, hidden: &dyn Fn(i64) -> bool, summaries: &[&str]) -> bool {
    if !entry.kind.is_derived() {
        return false;
    }
    let failed = entry.kind == Kind::Command
        && (entry.runs.iter().rev())
            .find(|run| hidden(run.result_seq))
            .is_some_and(|run| run.exit_code != 0);
    !failed && summaries.iter().any(|text| text.contains(&entry.key))
}

/// The entries the block has to show: every todo and note, and every derived entry
/// with at least one seq the view hides (`hidden`).
fn items(entries: &[Entry], hidden: &dyn Fn(i64) -> bool) -> Vec<Item> {
    let mut items = Vec::new();
    for entry in entries {
        if !entry.kind.is_derived() {
            let line = match (entry.kind, entry.status) {
                (Kind::Todo, Some(status)) => {
                    format!("[{}] {}: {}", status.label(), entry.key, entry.text)
                }
                _ => entry.text.clone(),
            };
            items.push(Item {
                kind: entry.kind,
                line,
                age: (entry.position, 0),
                done: entry.status == Some(TodoStatus::Done),
            });
            continue;
        }
        let Some(last_hidden) = entry.seqs.iter().rev().copied().find(|&seq| hidden(seq)) else {
            continue;
        };
        let mut line = entry.text.clone();
        if entry.kind == Kind::Command
            && let Some(run) = entry.runs.iter().rev().find(|run| hidden(run.result_seq))
        {
            line.push_str(&format!(" (exit {})", run.exit_code));
        }
        items.push(Item {
            kind: entry.kind,
            line,
            age: (last_hidden, entry.position),
            done: false,
        });
    }
    items
}

/// The order in which entries fold when the block is over its cap: derived entries
/// oldest first, then notes, then done todos, then the other todos.
fn fold_order(items: &[Item]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| {
        let item = &items[i];
        let rank = match item.kind {
            Kind::File | Kind::Command | Kind::Error => 0,
            Kind::Note => 1,
            Kind::Todo if item.done => 2,
            Kind::Todo => 3,
        };
        (rank, item.age)
    });
    order
}

fn section_title(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Todo => ("Todos:", "todos"),
        Kind::Note => ("Notes:", "notes"),
        Kind::File => ("Files touched in compacted messages:", "files"),
        Kind::Command => ("Commands run in compacted messages:", "commands"),
        Kind::Error => ("Errors seen in compacted messages:", "errors"),
    }
}

const SECTIONS: [Kind; 5] = [
    Kind::Todo,
    Kind::Note,
    Kind::File,
    Kind::Command,
    Kind::Error,
];

/// The block with the items of `folded` (a mask) counted instead of listed.
fn layout(
    items: &[Item],
    folded: &[bool],
) -> (String, BTreeMap<Kind, usize>, BTreeMap<Kind, usize>) {
    let mut text = String::from(HEADING);
    let mut listed_by = BTreeMap::new();
    let mut folded_by = BTreeMap::new();
    for kind in SECTIONS {
        let mut of_kind: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].kind == kind)
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        of_kind.sort_by_key(|&i| items[i].age);
        let (title, noun) = section_title(kind);
        text.push('\n');
        text.push_str(title);
        let count = of_kind.iter().filter(|&&i| folded[i]).count();
        if count > 0 {
            text.push_str(&format!("\n- … and {count} earlier {noun}"));
            folded_by.insert(kind, count);
        }
        let mut listed = 0;
        for &i in of_kind.iter().filter(|&&i| !folded[i]) {
            text.push_str("\n- ");
            text.push_str(&items[i].line);
            listed += 1;
        }
        if listed > 0 {
            listed_by.insert(kind, listed);
        }
    }
    (text, listed_by, folded_by)
}

/// The ledger block within `cap_tokens` as `count` counts text; `None` when there is
/// nothing to show or not even the counts fit (the cap is then too small for any
/// ledger: a cap of 0 turns the block off).
pub fn render(
    entries: &[Entry],
    hidden: &dyn Fn(i64) -> bool,
    cap_tokens: i64,
    count: &dyn Fn(&str) -> i64,
) -> Option<Block> {
    if cap_tokens <= 0 {
        return None;
    }
    let items = items(entries, hidden);
    if items.is_empty() {
        return None;
    }
    let order = fold_order(&items);
    let attempt = |k: usize| {
        let mut folded = vec![false; items.len()];
        for &i in &order[..k] {
            folded[i] = true;
        }
        let (text, listed, folded) = layout(&items, &folded);
        let tokens = count(&text);
        Block {
            text,
            tokens,
            listed,
            folded,
        }
    };
    let whole = attempt(0);
    if whole.tokens <= cap_tokens {
        return Some(whole);
    }
    // The fewest folds that fit: found by bisection (folding more nearly always makes the
    // block smaller), then confirmed one fold at a time.
    let (mut low, mut high) = (1, items.len());
    if attempt(high).tokens > cap_tokens {
        return None;
    }
    while low < high {
        let middle = low + (high - low) / 2;
        if attempt(middle).tokens <= cap_tokens {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    (low..=items.len())
        .map(attempt)
        .find(|block| block.tokens <= cap_tokens)
}

/// How many entries of each kind the block has to account for (listed or folded).
pub fn shown_counts(entries: &[Entry], hidden: &dyn Fn(i64) -> bool) -> BTreeMap<Kind, usize> {
    let mut counts = BTreeMap::new();
    for item in items(entries, hidden) {
        *counts.entry(item.kind).or_insert(0) += 1;
    }
    counts
}
