//! What both ways of writing a batch share (statement.rs, function.rs): the appends'
//! messages as the statement's columns, and each append's outcome from its rows.
use sqlx::{FromRow, Row};

use super::super::append_write::{MessageColumns, Seen};
use super::super::sessions::SessionRow;
use super::{Item, Outcome};
use crate::message::Role;
use crate::session::Session;

/// The appends' messages as the statement's columns, taken out of the items, and
/// whether each append holds a user message (it lifts the compaction loop guard's
/// pause).
pub(super) fn take_messages(items: &mut [Item]) -> (Vec<bool>, MessageColumns) {
    let users: Vec<bool> = items
        .iter()
        .map(|item| item.messages.roles.contains(&(Role::User as i16)))
        .collect();
    let mut messages = MessageColumns::default();
    for (index, item) in (0..).zip(items.iter_mut()) {
        messages.extend(index, std::mem::take(&mut item.messages));
    }
    (users, messages)
}

/// Each append's outcome from the statement's rows (an append without a row raced);
/// `jobs`: the rows carry the job each append enqueued.
pub(super) fn outcomes(
    rows: &[sqlx::postgres::PgRow],
    items: &[Item],
    jobs: bool,
) -> Result<Vec<Outcome>, sqlx::Error> {
    let mut outcomes: Vec<Outcome> = items.iter().map(|_| Outcome::Raced(None)).collect();
    for row in rows {
        let item: i32 = row.try_get("item")?;
        let Some(outcome) = outcomes.get_mut(item as usize) else {
            continue;
        };
        if !row.try_get::<bool, _>("locked")? {
            // Another transaction holds the session's row: alone, it waits for it.
            *outcome = Outcome::Alone;
        } else if row.try_get::<bool, _>("applied")? {
            *outcome = Outcome::Applied(
                Box::new(Session::from(SessionRow::from_row(row)?)),
                row.try_get("row_version")?,
                if jobs { row.try_get("job_id")? } else { None },
            );
        } else if items[item as usize].pending.is_some() {
            *outcome = Outcome::Raced(Some(Seen {
                row_version: row.try_get("row_version_now")?,
                pending: row.try_get("pending_now")?,
            }));
        }
    }
    Ok(outcomes)
}
