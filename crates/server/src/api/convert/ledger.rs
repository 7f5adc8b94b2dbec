//! Task-ledger entries and updates between the proto and the core.
use crate::error::{Error, Result};
use crate::ledger::todos::{NoteUpdate, TodoUpdate};
use crate::ledger::{Entry, TodoStatus};
use crate::pb;

pub(in crate::api) fn entry_to_pb(entry: &Entry) -> pb::LedgerEntry {
    pb::LedgerEntry {
        kind: entry.kind as i32,
        key: entry.key.clone(),
        text: entry.text.clone(),
        seqs: entry.seqs.clone(),
        status: entry.status.map_or(0, |status| status as i32),
        exit_codes: entry.runs.iter().map(|run| run.exit_code).collect(),
        exit_seqs: entry.runs.iter().map(|run| run.result_seq).collect(),
    }
}

pub(in crate::api) fn todos_from_pb(todos: Vec<pb::LedgerTodo>) -> Result<Vec<TodoUpdate>> {
    todos
        .into_iter()
        .enumerate()
        .map(|(index, todo)| {
            let status = match pb::TodoStatus::try_from(todo.status) {
                Ok(pb::TodoStatus::Unspecified) => None,
                Ok(pb::TodoStatus::Pending) => Some(TodoStatus::Pending),
                Ok(pb::TodoStatus::InProgress) => Some(TodoStatus::InProgress),
                Ok(pb::TodoStatus::Done) => Some(TodoStatus::Done),
                Err(_) => {
                    return Err(Error::invalid(
                        format!("todos[{index}].status"),
                        format!(
                            "{} is not a todo status (0 unspecified, 1 pending, 2 in progress, 3 done)",
                            todo.status
                        ),
                    ));
                }
            };
            Ok(TodoUpdate {
                id: todo.id,
                text: todo.text,
                status,
            })
        })
        .collect()
}

pub(in crate::api) fn notes_from_pb(notes: Vec<pb::LedgerNote>) -> Vec<NoteUpdate> {
    notes
        .into_iter()
        .map(|note| NoteUpdate {
            id: note.id,
            text: note.text,
        })
        .collect()
}
