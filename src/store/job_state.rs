//! A job's state, as the `jobs.state` check constraint allows it (migration 0005). The
//! one place a state is spelled for the database: [`JobState::as_str`] and
//! [`JobState::from_db`], which the sqlx mapping below uses in both directions.
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueRef};
use sqlx::{Decode, Encode, Postgres, Type};

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

impl Type<Postgres> for JobState {
    fn type_info() -> PgTypeInfo {
        <&str as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <&str as Type<Postgres>>::compatible(ty)
    }
}

impl PgHasArrayType for JobState {
    fn array_type_info() -> PgTypeInfo {
        <&str as PgHasArrayType>::array_type_info()
    }

    fn array_compatible(ty: &PgTypeInfo) -> bool {
        <&str as PgHasArrayType>::array_compatible(ty)
    }
}

impl Encode<'_, Postgres> for JobState {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <&str as Encode<Postgres>>::encode_by_ref(&self.as_str(), buf)
    }
}

impl<'r> Decode<'r, Postgres> for JobState {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(JobState::from_db(<&str as Decode<Postgres>>::decode(
            value,
        )?)?)
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
