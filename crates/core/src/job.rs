//! A queued job as the layers above the store see it: its state (spelled for the
//! database in one place, [`JobState::as_str`] and [`JobState::from_db`]), its end, and
//! what a fallback run after a rescue means. The queue itself is the store's and the
//! runner's; this is only what they agree on.
use std::time::Duration;

/// The state of a job (see migrations/0005_jobs.sql for its life).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobState {
    Available,
    Running,
    Completed,
    /// Failed, due again at its `run_at`.
    Retryable,
    Discarded,
    Cancelled,
}

/// A state the database holds that [`JobState`] does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown job state {0:?}")]
pub struct UnknownJobState(pub String);

impl JobState {
    /// Every state.
    pub const ALL: [JobState; 6] = [
        JobState::Available,
        JobState::Running,
        JobState::Completed,
        JobState::Retryable,
        JobState::Discarded,
        JobState::Cancelled,
    ];

    /// The state as the `jobs.state` column spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Available => "available",
            JobState::Running => "running",
            JobState::Completed => "completed",
            JobState::Retryable => "retryable",
            JobState::Discarded => "discarded",
            JobState::Cancelled => "cancelled",
        }
    }

    /// The state the `jobs.state` column spells `s`.
    pub fn from_db(s: &str) -> Result<JobState, UnknownJobState> {
        JobState::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| UnknownJobState(s.to_string()))
    }

    /// Whether the job has reached an end state.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Discarded | JobState::Cancelled
        )
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A queued job, with its session's external id.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: i64,
    pub tenant_id: i64,
    pub session_id: i64,
    pub external_id: String,
    pub kind: String,
    pub state: JobState,
    pub priority: i16,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_at: chrono::DateTime<chrono::Utc>,
    pub args: serde_json::Value,
    pub result: Option<serde_json::Value>,
    pub last_error: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The worker of this job's last attempt stopped (the job was rescued): this run
    /// ends that attempt with the deterministic fallback, without the model, and the
    /// job as an exhausted one ends (`last_error` says why).
    pub fallback: bool,
}

impl Job {
    /// Whether the job has reached an end state.
    pub fn is_finished(&self) -> bool {
        self.state.is_finished()
    }

    /// On a fallback run, why the attempt failed: it stands where a model's error
    /// stands when the last attempt falls back to deterministic truncation.
    pub fn fallback_failure(&self) -> Option<String> {
        self.fallback.then(|| {
            self.last_error
                .clone()
                .unwrap_or_else(|| RESCUE_ERROR.to_string())
        })
    }

    /// How a fallback run ends the job: as an exhausted attempt does (failed, not
    /// retried, announced), also when it found nothing left to summarize.
    pub fn fallback_end(&self, end: JobEnd) -> JobEnd {
        match (self.fallback_failure(), end) {
            (Some(error), JobEnd::Completed(_)) => JobEnd::Failed {
                error: format!("{error}; nothing was left to summarize"),
                retry_in: None,
            },
            (_, end) => end,
        }
    }
}

/// The error of an attempt whose worker stopped before finishing it.
pub const RESCUE_ERROR: &str =
    "the worker holding the job stopped before finishing (its lease expired)";

/// How a running job ends.
#[derive(Debug, Clone)]
pub enum JobEnd {
    Completed(serde_json::Value),
    /// Failed; retried after the delay, or discarded when it is `None` or the attempts
    /// are used up.
    Failed {
        error: String,
        retry_in: Option<Duration>,
    },
    Cancelled(String),
}

impl JobEnd {
    /// The state this end asks for (a retryable job whose attempts are used up is
    /// discarded instead, by the database).
    pub fn state(&self) -> JobState {
        match self {
            JobEnd::Completed(_) => JobState::Completed,
            JobEnd::Failed {
                retry_in: Some(_), ..
            } => JobState::Retryable,
            JobEnd::Failed { retry_in: None, .. } => JobState::Discarded,
            JobEnd::Cancelled(_) => JobState::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_maps_back_to_itself() {
        for state in JobState::ALL {
            assert_eq!(JobState::from_db(state.as_str()).unwrap(), state);
        }
        assert!(JobState::from_db("paused").is_err());
    }
}
