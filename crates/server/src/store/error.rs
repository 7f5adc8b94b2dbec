//! The store's own error: what a failed database call means to the layers above.
//! SQLSTATE codes and driver errors are read here and nowhere else; the layers above
//! see a kind (unavailable, unique violation, migration, other) and never a driver type.
//! Its text is the driver's, for logs; the domain error it becomes sends clients none.
use crate::error::Error;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot serve now (connection lost, pool closed or timed out, out of
    /// resources, shutting down): retrying later may succeed.
    #[error(transparent)]
    Unavailable(sqlx::Error),
    /// A unique constraint refused the write (SQLSTATE 23505).
    #[error(transparent)]
    UniqueViolation(sqlx::Error),
    /// The schema migrations could not be applied.
    #[error(transparent)]
    Migration(sqlx::Error),
    /// The schema is not one this binary runs on: a sentence saying why and what to do.
    #[error("{0}")]
    Schema(String),
    /// Anything else: a defect or a broken database, logged whole.
    #[error(transparent)]
    Other(sqlx::Error),
}

pub type StoreResult<T> = std::result::Result<T, StoreError>;

impl StoreError {
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, StoreError::UniqueViolation(_))
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> StoreError {
        match &error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                StoreError::Unavailable(error)
            }
            sqlx::Error::Migrate(_) => StoreError::Migration(error),
            sqlx::Error::Database(db) => match db.code().as_deref() {
                Some(READ_ONLY) => {
                    super::read_only::seen();
                    StoreError::Unavailable(error)
                }
                Some(code) if is_unavailable_sqlstate(code) => StoreError::Unavailable(error),
                Some("23505") => StoreError::UniqueViolation(error),
                _ => StoreError::Other(error),
            },
            _ => StoreError::Other(error),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::Migration(sqlx::Error::Migrate(Box::new(error)))
    }
}

/// SQLSTATE read_only_sql_transaction: the server took the connection's write as on a
/// standby (a demoted primary); its connections are replaced (`read_only`).
const READ_ONLY: &str = "25006";

/// SQLSTATE classes meaning "try again later": connection exceptions (08),
/// insufficient resources (53), operator intervention such as shutdown (57).
fn is_unavailable_sqlstate(code: &str) -> bool {
    code.starts_with("08") || code.starts_with("53") || code.starts_with("57")
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Error {
        match error {
            StoreError::Unavailable(cause) => Error::Unavailable(Box::new(cause)),
            other => Error::Internal(Box::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_are_unavailable_and_the_rest_internal() {
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(matches!(StoreError::from(io), StoreError::Unavailable(_)));
        assert!(matches!(
            Error::from(StoreError::from(sqlx::Error::PoolTimedOut)),
            Error::Unavailable(_)
        ));
        assert!(matches!(
            Error::from(StoreError::from(sqlx::Error::RowNotFound)),
            Error::Internal(_)
        ));
        for code in ["08006", "53300", "57P01"] {
            assert!(is_unavailable_sqlstate(code), "{code}");
        }
        assert!(!is_unavailable_sqlstate("23505"));
    }
}
