//! How ctxd's tables spread over a distributed PostgreSQL (Citus): every table a tenant
//! owns is distributed by `tenant_id`, all co-located with `sessions`, so a tenant's
//! rows live on one node; the tables read before the tenant is known are reference
//! tables, copied to every node (docs/decisions/0028-citus-distribution.md). On one
//! PostgreSQL this is only a description, which the schema and the statements are
//! checked against (`routing`, and tests/it/distribution.rs).
pub mod routing;

/// A table and how it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub placement: Placement,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A copy on every node: looked up before the tenant is known.
    Reference,
    /// Split by `tenant_id`, co-located with `sessions`.
    ByTenant,
}

const fn by_tenant(name: &'static str) -> Table {
    Table {
        name,
        placement: Placement::ByTenant,
    }
}

/// The reference tables, in the order they are made so (a table after those it
/// references).
pub const REFERENCE: [Table; 2] = [
    Table {
        name: "tenants",
        placement: Placement::Reference,
    },
    Table {
        name: "api_keys",
        placement: Placement::Reference,
    },
];

/// The tables distributed by tenant, in the order they are distributed (a table after
/// those its foreign keys reference).
pub const DISTRIBUTED: [Table; 17] = [
    by_tenant("sessions"),
    by_tenant("messages"),
    by_tenant("tool_calls"),
    by_tenant("idempotency_keys"),
    by_tenant("summaries"),
    by_tenant("summary_links"),
    by_tenant("jobs"),
    by_tenant("events"),
    by_tenant("events_pruned"),
    by_tenant("tenant_quotas"),
    by_tenant("ledger_entries"),
    by_tenant("session_lineage"),
    by_tenant("message_views"),
    by_tenant("compactions"),
    by_tenant("session_links"),
    by_tenant("proxy_heads"),
    by_tenant("build_history"),
];

/// Every table of the schema but sqlx's record of migrations, which stays on the
/// coordinator.
pub fn tables() -> impl Iterator<Item = &'static Table> {
    REFERENCE.iter().chain(DISTRIBUTED.iter())
}

/// The statements that place the tables on a Citus coordinator, once the schema is
/// migrated: reference tables first, then each distributed table co-located with
/// `sessions`.
pub fn placement_sql() -> Vec<String> {
    let reference = REFERENCE
        .iter()
        .map(|t| format!("select create_reference_table('{}')", t.name));
    let distributed = DISTRIBUTED.iter().map(|t| {
        if t.name == "sessions" {
            "select create_distributed_table('sessions', 'tenant_id')".to_string()
        } else {
            format!(
                "select create_distributed_table('{}', 'tenant_id', colocate_with => 'sessions')",
                t.name
            )
        }
    });
    reference.chain(distributed).collect()
}

/// Whether the database is a distributed one (a Citus coordinator: the extension is
/// installed). Through the store's executor: behind a transaction pooler a statement
/// sqlx would keep prepared collides with another client's of the same name.
pub(super) async fn detect(db: super::pooler::Db<'_>) -> super::StoreResult<bool> {
    Ok(
        sqlx::query_scalar("select exists (select 1 from pg_extension where extname = 'citus')")
            .fetch_one(db)
            .await?,
    )
}

/// The functions ctxd's statements call inside queries a node runs on its own shards:
/// each must exist on every node.
pub const NODE_FUNCTIONS: [&str; 7] = [
    "ctxd_message_doc",
    "ctxd_search_text",
    "ctxd_search_excerpt",
    "ctxd_search_vector",
    "ctxd_ledger_seqs",
    "ctxd_last",
    "ctxd_message_bytes",
];

impl super::Store {
    /// Places the tables on a Citus coordinator's nodes (`placement_sql`), skipping
    /// those placed already, and creates the functions queries call on every node.
    /// Returns how many tables it placed. Refuses a database without Citus.
    ///
    /// The foreign keys are dropped first and made again after: Citus would otherwise
    /// turn every table referencing `tenants`, once that is a reference table, into a
    /// coordinator-local table, which it then cannot distribute (nor one with an
    /// identity column at all).
    pub async fn distribute(&self) -> super::StoreResult<usize> {
        if !detect(self.db()).await? {
            return Err(super::StoreError::Other(sqlx::Error::Configuration(
                "the database is not a Citus coordinator (no citus extension)".into(),
            )));
        }
        let placed: Vec<String> = sqlx::query_scalar(
            "select table_name::text from citus_tables
             where citus_table_type in ('distributed', 'reference')",
        )
        .fetch_all(self.db())
        .await?;
        let pending: Vec<(&Table, String)> = tables()
            .zip(placement_sql())
            .filter(|(table, _)| !placed.iter().any(|p| p == table.name))
            .collect();
        if pending.is_empty() {
            return Ok(0);
        }
        // One transaction: a failure leaves the foreign keys and the tables as they
        // were. Its shard operations run one after another, as Citus requires of a
        // transaction that also changes reference tables.
        let mut tx = self.pool.begin().await?;
        sqlx::query("set local citus.multi_shard_modify_mode to 'sequential'")
            .execute(&mut *tx)
            .await?;
        let keys: Vec<(String, String, String)> = sqlx::query_as(
            "select conrelid::regclass::text, conname::text, pg_get_constraintdef(oid)
             from pg_constraint
             where contype = 'f' and connamespace = current_schema()::regnamespace",
        )
        .fetch_all(&mut *tx)
        .await?;
        // Names and definitions read from the catalog, not from a client.
        for (table, name, _) in &keys {
            let drop = format!("alter table {table} drop constraint {name}");
            sqlx::query(sqlx::AssertSqlSafe(drop))
                .execute(&mut *tx)
                .await?;
        }
        for (_, sql) in &pending {
            sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                .execute(&mut *tx)
                .await?;
        }
        for (table, name, definition) in &keys {
            let add = format!("alter table {table} add constraint {name} {definition}");
            sqlx::query(sqlx::AssertSqlSafe(add))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        sqlx::query(
            "select create_distributed_function(p.oid::regprocedure) from pg_proc p
             where p.pronamespace = current_schema()::regnamespace and p.proname = any($1)",
        )
        .bind(NODE_FUNCTIONS)
        .execute(self.db())
        .await?;
        Ok(pending.len())
    }
}

/// Statements that read or write across tenants by design, none on the path of an
/// append or a build; each with the reason.
pub const ACROSS_TENANTS: &[(&str, &str)] = &[
    (
        "events/prune.sql",
        "the events retention: every shard deletes its own",
    ),
    (
        "jobs/lapsed.sql",
        "the rescue sweep's read; each rescue then locks one session",
    ),
    (
        "jobs/prune.sql",
        "the jobs retention: every shard deletes its own",
    ),
    ("jobs/queue_sample.sql", "the queue gauges' read"),
    (
        "search/unindexed_tenant.sql",
        "the indexer's read of a tenant to index",
    ),
    (
        "sessions/expired.sql",
        "the session retention's read; each deletion then locks one",
    ),
    (
        "tree/prune.sql",
        "the tree links' retention: every shard deletes its own",
    ),
];

/// Statements filtered by the tenant throughout that Citus 13.2 still would not route
/// as a whole: a common table expression that inserts (or calls a volatile function),
/// which its router planner refuses ("only SELECT, UPDATE, or DELETE common table
/// expressions may be router planned"), or an insert of rows selected from distributed
/// tables, it plans part by part and commits in two phases. None is left: such writes
/// are PL/pgSQL functions of plain statements (docs/decisions/0028-citus-distribution.md).
/// None may join it.
pub const PLANNED_IN_PARTS: &[&str] = &[];

/// The append's set-based statement (a batch's, and one append's composed of parts):
/// on a distributed database appends are written by `ctxd_append` (migration 0030,
/// `sql/append/write.sql`) instead, so these run on one PostgreSQL only, where they are
/// faster (docs/benchmarks.md, "The append as a function").
pub const ONE_POSTGRESQL_ONLY: &[&str] = &[
    "append/answers_fork.sql",
    "append/batch.sql",
    "append/batch_events.sql",
    "append/batch_jobs.sql",
    "append/batch_ledger.sql",
    "append/calls.sql",
    "append/events.sql",
    "append/idempotency.sql",
    "append/idempotency_job.sql",
    "append/job.sql",
    "append/ledger.sql",
    "append/messages.sql",
];

/// Statements Citus 13.2 refuses to plan at all, as `scripts/citus/run` found (the
/// check above cannot see why), left to rewrite: none now. (The three it found — now()
/// in a CASE or COALESCE of an update, an insert into a reference table selected from
/// another — read the time once in a CTE, use `least`, and take the tenant's id.)
pub const REFUSED_BY_CITUS: &[(&str, &str)] = &[];

/// A statement file's text as the store runs it: a fork's segments written out
/// (`{segments:$n}`).
pub fn written_out(sql: &str) -> String {
    super::forks::with_segments(sql)
}

/// How `name` is placed; `None` for a table this module does not know.
pub fn placement(name: &str) -> Option<Placement> {
    tables().find(|t| t.name == name).map(|t| t.placement)
}

#[cfg(test)]
mod tests {
    use super::{DISTRIBUTED, Placement, placement, placement_sql};

    #[test]
    fn sessions_are_distributed_first_and_every_other_table_with_them() {
        let sql = placement_sql();
        assert_eq!(sql[0], "select create_reference_table('tenants')");
        assert_eq!(
            sql[2],
            "select create_distributed_table('sessions', 'tenant_id')"
        );
        assert!(
            sql[3..]
                .iter()
                .all(|s| s.contains("colocate_with => 'sessions'"))
        );
        assert_eq!(sql.len(), 2 + DISTRIBUTED.len());
    }

    #[test]
    fn placement_is_known_for_each_table() {
        assert_eq!(placement("api_keys"), Some(Placement::Reference));
        assert_eq!(placement("messages"), Some(Placement::ByTenant));
        assert_eq!(placement("_sqlx_migrations"), None);
    }
}

#[cfg(test)]
mod statements {
    use super::routing::unrouted;
    use super::{ACROSS_TENANTS, ONE_POSTGRESQL_ONLY, PLANNED_IN_PARTS, written_out};

    /// Every SQL file of the store, with its text.
    fn sql_files() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/sql");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            for file in std::fs::read_dir(&dir).unwrap() {
                let file = file.unwrap().path();
                let name = file.strip_prefix(&root).unwrap().display().to_string();
                files.push((name, std::fs::read_to_string(&file).unwrap()));
            }
        }
        files.sort();
        files
    }

    #[test]
    fn every_statement_stays_on_one_tenant_but_the_listed_ones() {
        let mut wrong = Vec::new();
        for (name, sql) in sql_files() {
            if name == "forks/segments.sql" {
                // A fragment, checked where it is written out.
                continue;
            }
            let found = unrouted(&written_out(&sql));
            let listed = ACROSS_TENANTS.iter().any(|(file, _)| *file == name)
                || PLANNED_IN_PARTS.contains(&name.as_str())
                || ONE_POSTGRESQL_ONLY.contains(&name.as_str());
            if found.is_empty() == listed {
                wrong.push(format!("{name}: {found:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
