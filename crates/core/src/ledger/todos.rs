//! The client's side of the ledger: todos (done is terminal) and notes, checked and
//! planned against what the session holds.
use std::collections::{HashMap, HashSet};

use super::{Entry, Kind, TodoStatus};
use crate::error::Error;
use crate::validate::NUL_REASON;

/// Todos or notes one request may carry.
pub const MAX_UPDATES: usize = 100;
/// Longest todo or note id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Longest todo or note text, in characters.
pub const MAX_TEXT_CHARS: usize = 2_000;
/// Todos a session may hold.
pub const MAX_TODOS: usize = 500;
/// Notes a session may hold.
pub const MAX_NOTES: usize = 100;

/// A todo as the client sets it. Empty `text` keeps the stored text (a status change);
/// `None` status keeps the stored status (pending for a new todo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoUpdate {
    pub id: String,
    pub text: String,
    pub status: Option<TodoStatus>,
}

/// A note as the client sets it; empty `text` removes the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteUpdate {
    pub id: String,
    pub text: String,
}

/// The status a todo gets: the requested one, except that done stays done. The flag
/// says the request asked to leave done (and was not followed).
pub fn next_status(
    current: Option<TodoStatus>,
    requested: Option<TodoStatus>,
) -> (TodoStatus, bool) {
    match (current, requested) {
        (Some(TodoStatus::Done), Some(requested)) => {
            (TodoStatus::Done, requested != TodoStatus::Done)
        }
        (_, Some(requested)) => (requested, false),
        (Some(current), None) => (current, false),
        (None, None) => (TodoStatus::Pending, false),
    }
}

/// What an update writes: client entries to insert or replace (position 0 for new
/// ones: the store numbers them), the notes removed, and the todos that stayed done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub upserts: Vec<Entry>,
    pub removed_notes: Vec<String>,
    pub kept_done: Vec<String>,
}

fn check_id(field: &str, id: &str, seen: &mut HashSet<String>) -> Result<(), Error> {
    if id.trim().is_empty() {
        return Err(Error::invalid(format!("{field}.id"), "must not be empty"));
    }
    if id.chars().count() > MAX_ID_CHARS {
        return Err(Error::invalid(
            format!("{field}.id"),
            format!("must be at most {MAX_ID_CHARS} characters"),
        ));
    }
    if id.contains('\0') {
        return Err(Error::invalid(format!("{field}.id"), NUL_REASON));
    }
    if !seen.insert(id.to_string()) {
        return Err(Error::invalid(
            format!("{field}.id"),
            "repeats an id given earlier in the same request",
        ));
    }
    Ok(())
}

fn check_text(field: &str, text: &str) -> Result<(), Error> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(Error::invalid(
            format!("{field}.text"),
            format!("must be at most {MAX_TEXT_CHARS} characters"),
        ));
    }
    if text.contains('\0') {
        return Err(Error::invalid(format!("{field}.text"), NUL_REASON));
    }
    Ok(())
}

/// Checks an update against the session's current client entries and plans it;
/// `last_seq`: the session's newest seq (0 when none), recorded as the entries' source.
/// Nothing is planned when any part is refused.
pub fn plan(
    existing: &[Entry],
    todos: &[TodoUpdate],
    notes: &[NoteUpdate],
    last_seq: i64,
) -> Result<Plan, Error> {
    for (field, count) in [("todos", todos.len()), ("notes", notes.len())] {
        if count > MAX_UPDATES {
            return Err(Error::invalid(
                field,
                format!("must hold at most {MAX_UPDATES} {field} per request"),
            ));
        }
    }
    let current = Current {
        stored: existing
            .iter()
            .filter(|entry| !entry.kind.is_derived())
            .map(|entry| ((entry.kind, entry.key.as_str()), entry))
            .collect(),
        existing,
        seqs: if last_seq > 0 {
            vec![last_seq]
        } else {
            Vec::new()
        },
    };
    let mut plan = Plan::default();
    plan_todos(&current, todos, &mut plan)?;
    plan_notes(&current, notes, &mut plan)?;
    Ok(plan)
}

/// What an update is planned against: the session's entries, the client's by kind and
/// key, and the seqs new entries record.
struct Current<'a> {
    existing: &'a [Entry],
    stored: HashMap<(Kind, &'a str), &'a Entry>,
    seqs: Vec<i64>,
}

impl Current<'_> {
    fn count(&self, kind: Kind) -> usize {
        self.existing.iter().filter(|e| e.kind == kind).count()
    }
}

fn plan_todos(current: &Current<'_>, todos: &[TodoUpdate], plan: &mut Plan) -> Result<(), Error> {
    let mut seen = HashSet::new();
    let mut new_todos = 0;
    for (index, todo) in todos.iter().enumerate() {
        let field = format!("todos[{index}]");
        check_id(&field, &todo.id, &mut seen)?;
        check_text(&field, &todo.text)?;
        let stored = current.stored.get(&(Kind::Todo, todo.id.as_str()));
        if stored.is_none() {
            if todo.text.trim().is_empty() {
                return Err(Error::invalid(
                    format!("{field}.text"),
                    "must not be empty for a new todo",
                ));
            }
            new_todos += 1;
        }
        let (status, kept_done) = next_status(stored.and_then(|e| e.status), todo.status);
        if kept_done {
            plan.kept_done.push(todo.id.clone());
        }
        let text = match stored {
            Some(entry) if todo.text.is_empty() => entry.text.clone(),
            _ => todo.text.clone(),
        };
        plan.upserts.push(Entry {
            kind: Kind::Todo,
            key: todo.id.clone(),
            text,
            seqs: current.seqs.clone(),
            runs: Vec::new(),
            status: Some(status),
            position: stored.map_or(0, |e| e.position),
        });
    }
    if current.count(Kind::Todo) + new_todos > MAX_TODOS {
        return Err(Error::invalid(
            "todos",
            format!("would take the session past {MAX_TODOS} todos"),
        ));
    }
    Ok(())
}

fn plan_notes(current: &Current<'_>, notes: &[NoteUpdate], plan: &mut Plan) -> Result<(), Error> {
    let mut seen = HashSet::new();
    let mut new_notes = 0usize;
    let mut removed = 0usize;
    for (index, note) in notes.iter().enumerate() {
        let field = format!("notes[{index}]");
        check_id(&field, &note.id, &mut seen)?;
        check_text(&field, &note.text)?;
        let stored = current.stored.get(&(Kind::Note, note.id.as_str()));
        if note.text.is_empty() {
            if stored.is_some() {
                removed += 1;
                plan.removed_notes.push(note.id.clone());
            }
            continue;
        }
        new_notes += usize::from(stored.is_none());
        plan.upserts.push(Entry {
            kind: Kind::Note,
            key: note.id.clone(),
            text: note.text.clone(),
            seqs: current.seqs.clone(),
            runs: Vec::new(),
            status: None,
            position: stored.map_or(0, |e| e.position),
        });
    }
    if (current.count(Kind::Note) + new_notes).saturating_sub(removed) > MAX_NOTES {
        return Err(Error::invalid(
            "notes",
            format!("would take the session past {MAX_NOTES} notes"),
        ));
    }
    Ok(())
}
