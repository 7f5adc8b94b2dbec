//! Compact, GetJob and Expand.

use super::ContextApi;
use super::convert::{job_message, stored_to_pb};
use crate::engine;
use crate::error::{Error, Result};
use crate::pb;

pub(super) async fn compact(
    api: &ContextApi,
    tenant: i64,
    req: pb::CompactRequest,
) -> Result<pb::CompactResponse> {
    let mode = match pb::CompactMode::try_from(req.mode) {
        Ok(pb::CompactMode::Unspecified | pb::CompactMode::Auto) => engine::CompactMode::Auto,
        Ok(pb::CompactMode::ClearToolResults) => engine::CompactMode::ClearToolResults,
        Ok(pb::CompactMode::Summarize) => engine::CompactMode::Summarize,
        Ok(pb::CompactMode::Emergency) => engine::CompactMode::Emergency,
        Err(_) => {
            return Err(Error::invalid(
                "mode",
                format!("unknown compaction mode {}", req.mode),
            ));
        }
    };
    let compacted = api
        .engine
        .compact(
            tenant,
            engine::CompactRequest {
                session_id: req.session_id,
                mode,
                target_tokens: req.target_tokens,
                dry_run: req.dry_run,
                wait: wait_timeout(req.wait, req.wait_timeout_ms)?,
            },
        )
        .await?;
    let (summarized_first_seq, summarized_last_seq) = compacted.summarized_seqs.unwrap_or((0, 0));
    let pending = compacted
        .job
        .as_ref()
        .map_or(compacted.job_id.is_some(), |job| !job.is_finished());
    Ok(pb::CompactResponse {
        no_progress: compacted.tokens_after >= compacted.tokens_before && !pending,
        job_id: compacted.job_id.unwrap_or(0),
        job: compacted.job.map(job_message),
        summarized_first_seq,
        summarized_last_seq,
        tokens_before: compacted.tokens_before,
        tokens_after: compacted.tokens_after,
        cleared_seqs: compacted.cleared_seqs,
        version: compacted.version,
        applied: compacted.applied,
    })
}

pub(super) async fn get_job(
    api: &ContextApi,
    tenant: i64,
    req: pb::GetJobRequest,
) -> Result<pb::Job> {
    if req.job_id <= 0 {
        return Err(Error::invalid(
            "job_id",
            format!("must be positive, got {}", req.job_id),
        ));
    }
    Ok(job_message(api.engine.job(tenant, req.job_id).await?))
}

pub(super) async fn expand(
    api: &ContextApi,
    tenant: i64,
    req: pb::ExpandRequest,
) -> Result<pb::ExpandResponse> {
    let target = match req.target {
        Some(pb::expand_request::Target::Range(range)) => engine::ExpandTarget::Range {
            first_seq: range.first_seq,
            last_seq: range.last_seq,
        },
        Some(pb::expand_request::Target::List(list)) => engine::ExpandTarget::List(list.seqs),
        Some(pb::expand_request::Target::SummaryId(id)) => engine::ExpandTarget::Summary(id),
        None => {
            return Err(Error::invalid(
                "target",
                "is required: set range (first_seq, last_seq) or list (seqs)",
            ));
        }
    };
    let expanded = api
        .engine
        .expand(
            tenant,
            engine::ExpandRequest {
                session_id: req.session_id,
                target,
                max_tokens: req.max_tokens,
            },
        )
        .await?;
    Ok(pb::ExpandResponse {
        messages: expanded
            .messages
            .iter()
            .map(|stored| stored_to_pb(stored, &stored.message))
            .collect(),
        total_tokens: expanded.total_tokens,
        next_seq: expanded.next_seq,
    })
}

/// Compact's wait: off, or for how long (0 ms: a minute).
fn wait_timeout(wait: bool, timeout_ms: u32) -> Result<Option<std::time::Duration>> {
    const MAX_WAIT_MS: u32 = 600_000;
    if !wait {
        return Ok(None);
    }
    if timeout_ms > MAX_WAIT_MS {
        return Err(Error::invalid(
            "wait_timeout_ms",
            format!("must be at most {MAX_WAIT_MS} (10 minutes), got {timeout_ms}"),
        ));
    }
    let ms = if timeout_ms == 0 { 60_000 } else { timeout_ms };
    Ok(Some(std::time::Duration::from_millis(u64::from(ms))))
}
