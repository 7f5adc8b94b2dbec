//! The schema's migrations: read what the database applied, decide with `plan`, apply
//! what is pending when asked to. `ctxd serve` applies them unless told not to, `ctxd
//! migrate` applies them (or lists them with `--dry-run`), admin commands never do.
use sqlx::Connection as _;
use sqlx::postgres::{PgConnectOptions, PgConnection};

use super::{StoreError, StoreResult};

mod plan;
pub mod rule;

pub use plan::{Applied, Assessment, Migration, assess, contracts_after};

/// The migrations in `migrations/`.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// What connecting does about migrations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migrations {
    /// Apply the pending ones.
    Apply,
    /// Apply none: refuse a schema that lacks one this binary needs.
    Require,
}

/// The migrations this binary carries.
pub fn known() -> Vec<Migration> {
    MIGRATOR
        .iter()
        .filter(|m| m.migration_type.is_up_migration())
        .map(|m| Migration {
            version: m.version,
            description: m.description.to_string(),
            checksum: m.checksum.to_vec(),
        })
        .collect()
}

/// The schema at `options` against this binary.
pub async fn inspect(options: &PgConnectOptions) -> StoreResult<Assessment> {
    let mut conn = PgConnection::connect_with(options).await?;
    let applied = applied(&mut conn).await;
    conn.close().await?;
    Ok(assess(&known(), &applied?))
}

/// Brings the schema at `options` to what this binary needs, or refuses it: applies
/// the pending migrations (`Apply`) or requires there are none (`Require`). A schema
/// with migrations this binary does not know is used as it is, unless one contracts what
/// this binary uses. The migrator holds a session-level advisory lock meanwhile, which a
/// transaction pooler would leave on whichever server connection took it: callers pass
/// PostgreSQL itself.
pub async fn prepare(options: &PgConnectOptions, mode: Migrations) -> StoreResult<Assessment> {
    let mut conn = PgConnection::connect_with(options).await?;
    let result = prepare_on(&mut conn, mode).await;
    conn.close().await?;
    result
}

async fn prepare_on(conn: &mut PgConnection, mode: Migrations) -> StoreResult<Assessment> {
    let assessment = assess(&known(), &applied(conn).await?);
    if let Some(refusal) = &assessment.refusal {
        return Err(StoreError::Schema(refusal.clone()));
    }
    if !assessment.newer.is_empty() {
        tracing::warn!(newer = %assessment.newer_list(), "the database's schema has migrations this ctxd does not know (a newer ctxd's); running on it");
    }
    if assessment.pending.is_empty() {
        return Ok(assessment);
    }
    if mode == Migrations::Require {
        return Err(StoreError::Schema(format!(
            "the database's schema lacks migrations this ctxd needs: {}; apply them with `ctxd migrate` (or start without --no-migrate)",
            assessment.pending_list()
        )));
    }
    let mut migrator = sqlx::migrate::Migrator {
        migrations: MIGRATOR.migrations.clone(),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    migrator.set_ignore_missing(true);
    migrator.run(&mut *conn).await?;
    tracing::info!(applied = %assessment.pending_list(), "migrations applied");
    Ok(assessment)
}

/// The migrations the database recorded (none on a database never migrated).
async fn applied(conn: &mut PgConnection) -> StoreResult<Vec<Applied>> {
    let exists: bool = sqlx::query_scalar("select to_regclass('_sqlx_migrations') is not null")
        .fetch_one(&mut *conn)
        .await?;
    if !exists {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, String, Vec<u8>, bool)> = sqlx::query_as(
        "select version, description, checksum, success from _sqlx_migrations order by version",
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(version, description, checksum, success)| Applied {
            migration: Migration {
                version,
                description,
                checksum,
            },
            success,
        })
        .collect())
}
