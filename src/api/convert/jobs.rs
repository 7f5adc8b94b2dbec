//! Jobs to the proto.

use super::timestamp;
use crate::pb;

pub(in crate::api) fn job_message(job: crate::store::JobRow) -> pb::Job {
    let state = match job.state.as_str() {
        "available" => pb::JobState::Available,
        "running" => pb::JobState::Running,
        "completed" => pb::JobState::Completed,
        "retryable" => pb::JobState::Retryable,
        "discarded" => pb::JobState::Discarded,
        "cancelled" => pb::JobState::Cancelled,
        _ => pb::JobState::Unspecified,
    };
    pb::Job {
        job_id: job.id,
        session_id: job.external_id,
        kind: job.kind,
        state: state as i32,
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        run_at: Some(timestamp(job.run_at)),
        last_error: job.last_error.unwrap_or_default(),
        result_json: job.result.map(|r| r.0.to_string()).unwrap_or_default(),
        created_at: Some(timestamp(job.created_at)),
        finished_at: job.finished_at.map(timestamp),
    }
}
