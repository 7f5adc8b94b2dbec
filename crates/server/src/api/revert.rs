//! RevertCompaction.

use super::ContextApi;
use super::convert::summary_to_pb;
use crate::engine;
use crate::error::{Error, Result};
use crate::pb;
use crate::revert::{Compaction, CompactionRecord};

pub(super) async fn revert_compaction(
    api: &ContextApi,
    tenant: i64,
    req: pb::RevertCompactionRequest,
) -> Result<pb::RevertCompactionResponse> {
    use pb::revert_compaction_request::Compaction as Named;
    let target = match req.compaction {
        Some(Named::EventCursor(cursor)) => engine::RevertTarget::EventCursor(cursor),
        Some(Named::SummaryId(id)) => engine::RevertTarget::SummaryId(id),
        None => {
            return Err(Error::invalid(
                "compaction",
                "is required: set event_cursor (the cursor of a TOOL_RESULTS_CLEARED or COMPACTION_COMPLETED event) or summary_id",
            ));
        }
    };
    let reverted = api
        .engine
        .revert_compaction(
            tenant,
            engine::RevertRequest {
                session_id: req.session_id,
                target,
                dry_run: req.dry_run,
                expected_version: req.expected_version,
            },
        )
        .await?;
    Ok(pb::RevertCompactionResponse {
        reverted: reverted.compactions.iter().map(reverted_to_pb).collect(),
        restored_seqs: reverted.restored_seqs,
        view_first_seq: reverted.view_first_seq,
        summaries: reverted.summaries.iter().map(summary_to_pb).collect(),
        tokens_before: reverted.tokens_before,
        tokens_after: reverted.tokens_after,
        version: reverted.version,
        applied: reverted.applied,
        resume_at_log_tokens: reverted.resume_at_log_tokens,
    })
}

fn reverted_to_pb(record: &CompactionRecord) -> pb::RevertedCompaction {
    pb::RevertedCompaction {
        event_cursor: record.event_seq.to_string(),
        kind: record.compaction.event_kind() as i32,
        compaction: match record.compaction {
            Compaction::Clearing => pb::CompactionKind::Unspecified as i32,
            Compaction::Summary(kind) => kind as i32,
        },
        seqs: record.seqs.clone(),
        summary_ids: record.summary_ids.clone(),
        first_seq: record.first_seq,
        last_seq: record.last_seq,
    }
}
