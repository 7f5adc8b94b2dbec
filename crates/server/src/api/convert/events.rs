//! Event kinds from the proto; events, heartbeats and stream ends to it.

use tonic::Status;

use super::timestamp;
use crate::events::{self, EventDetail, EventKind};
use crate::fanout::Item;
use crate::pb;

pub(in crate::api) fn event_kind_from_pb(kind: i32) -> Option<EventKind> {
    Some(match pb::EventKind::try_from(kind).ok()? {
        pb::EventKind::Unspecified => return None,
        pb::EventKind::CompactionStarted => EventKind::CompactionStarted,
        pb::EventKind::CompactionCompleted => EventKind::CompactionCompleted,
        pb::EventKind::CompactionFailed => EventKind::CompactionFailed,
        pb::EventKind::ToolResultsCleared => EventKind::ToolResultsCleared,
        pb::EventKind::OutputEvicted => EventKind::OutputEvicted,
        pb::EventKind::BudgetThresholdCrossed => EventKind::BudgetThresholdCrossed,
        pb::EventKind::SessionDeleted => EventKind::SessionDeleted,
        pb::EventKind::CompactionReverted => EventKind::CompactionReverted,
        pb::EventKind::SessionFinished => EventKind::SessionFinished,
        pb::EventKind::SessionForked => EventKind::SessionForked,
        pb::EventKind::RecallAnswered => EventKind::RecallAnswered,
    })
}

pub(in crate::api) fn item_to_pb(
    item: Item,
) -> std::result::Result<pb::SubscribeEventsResponse, Status> {
    use pb::subscribe_events_response::Item as Out;
    let item = match item {
        // Encoded by the first stream that sends the event, shared by the rest.
        Item::Event(row, cursor) => {
            return Ok(pb::SubscribeEventsResponse::encoded(row.encoded(
                cursor,
                || {
                    pb::SubscribeEventsResponse::new(Out::Event(event_to_pb(&row, cursor.encode())))
                        .encode_to_bytes()
                },
            )));
        }
        Item::Heartbeat(cursor) => Out::Heartbeat(pb::Heartbeat {
            time: Some(timestamp(chrono::Utc::now())),
            cursor: match cursor {
                events::Cursor::Session(0) => String::new(),
                events::Cursor::Tenant(position) if position == events::Position::START => {
                    String::new()
                }
                cursor => cursor.encode(),
            },
        }),
        Item::ShuttingDown => {
            return Err(Status::unavailable(
                "the server is shutting down; subscribe again with the last cursor to resume",
            ));
        }
        Item::Failed(error) => return Err(crate::api::status(error)),
    };
    Ok(pb::SubscribeEventsResponse::new(item))
}

pub(in crate::api) fn event_to_pb(row: &crate::events::Event, cursor: String) -> pb::Event {
    // Every kind is answered by one of the two (the events tests cover each).
    let detail = compaction_detail(row.detail.clone()).map_or_else(session_detail, Some);
    pb::Event {
        event_id: row.id,
        cursor,
        session_id: row.external_id.clone(),
        session_seq: row.session_seq,
        kind: i32::from(row.kind),
        created_at: Some(timestamp(row.created_at)),
        session_version: row.session_version,
        detail,
    }
}

/// What a compaction event says, on the wire; any other event back as it came.
fn compaction_detail(detail: EventDetail) -> Result<pb::event::Detail, EventDetail> {
    use pb::event::Detail;
    let compaction = |kind: events::CompactionKind| kind as i32;
    Ok(match detail {
        EventDetail::CompactionStarted {
            compaction: kind,
            job_id,
            attempt,
        } => Detail::CompactionStarted(pb::CompactionStarted {
            compaction: compaction(kind),
            job_id,
            attempt,
        }),
        EventDetail::CompactionCompleted {
            compaction: kind,
            level,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            first_seq,
            last_seq,
            summary_id,
            summaries_written,
            duration_ms,
            job_id,
        } => Detail::CompactionCompleted(pb::CompactionCompleted {
            compaction: compaction(kind),
            level,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            first_seq,
            last_seq,
            summary_id,
            summaries_written,
            duration_ms,
            job_id,
        }),
        EventDetail::CompactionFailed {
            compaction: kind,
            error,
            job_id,
            attempt,
            will_retry,
        } => Detail::CompactionFailed(pb::CompactionFailed {
            compaction: compaction(kind),
            error,
            job_id,
            attempt,
            will_retry,
        }),
        EventDetail::ToolResultsCleared {
            seqs,
            tokens_before,
            tokens_after,
        } => Detail::ToolResultsCleared(pb::ToolResultsCleared {
            seqs,
            tokens_before,
            tokens_after,
        }),
        EventDetail::OutputEvicted {
            seq,
            tool_name,
            tokens,
            preview_tokens,
        } => Detail::OutputEvicted(pb::OutputEvicted {
            seq,
            tool_name,
            tokens,
            preview_tokens,
        }),
        EventDetail::CompactionReverted {
            event_seqs,
            summary_ids,
            restored_seqs,
            view_first_seq,
            tokens_before,
            tokens_after,
            resume_at_log_tokens,
        } => Detail::CompactionReverted(pb::CompactionReverted {
            event_seqs,
            summary_ids,
            restored_seqs,
            view_first_seq,
            tokens_before,
            tokens_after,
            resume_at_log_tokens,
        }),
        other => return Err(other),
    })
}

/// What a session's budget or lifecycle event says, on the wire (a compaction event is
/// `compaction_detail`'s).
fn session_detail(detail: EventDetail) -> Option<pb::event::Detail> {
    use pb::event::Detail;
    Some(match detail {
        EventDetail::BudgetThresholdCrossed {
            previous_status,
            status,
            used_tokens,
            context_window,
        } => Detail::BudgetThresholdCrossed(pb::BudgetThresholdCrossed {
            previous_status,
            status,
            used_tokens,
            context_window,
        }),
        EventDetail::SessionDeleted => Detail::SessionDeleted(pb::SessionDeleted {}),
        EventDetail::SessionFinished {
            child_session_id,
            parent_session_id,
            parent_tool_call_id,
            result_seq,
        } => Detail::SessionFinished(pb::SessionFinished {
            child_session_id,
            parent_session_id,
            parent_tool_call_id,
            result_seq,
        }),
        EventDetail::SessionForked {
            source_session_id,
            fork_session_id,
            at_seq,
        } => Detail::SessionForked(pb::SessionForked {
            source_session_id,
            fork_session_id,
            at_seq,
        }),
        EventDetail::RecallAnswered {
            seq,
            tool_call_id,
            tool,
            tokens,
            error,
            round,
        } => Detail::RecallAnswered(pb::RecallAnswered {
            seq,
            tool_call_id,
            tool,
            tokens,
            error,
            round,
        }),
        _ => return None,
    })
}
