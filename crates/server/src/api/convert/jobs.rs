//! Jobs to the proto.

use super::timestamp;
use crate::job::JobState;
use crate::pb;

pub(in crate::api) fn job_message(job: crate::job::Job) -> pb::Job {
    let state = match job.state {
        JobState::Available => pb::JobState::Available,
        JobState::Running => pb::JobState::Running,
        JobState::Completed => pb::JobState::Completed,
        JobState::Retryable => pb::JobState::Retryable,
        JobState::Discarded => pb::JobState::Discarded,
        JobState::Cancelled => pb::JobState::Cancelled,
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
        result_json: job.result.map(|r| r.to_string()).unwrap_or_default(),
        created_at: Some(timestamp(job.created_at)),
        finished_at: job.finished_at.map(timestamp),
    }
}
