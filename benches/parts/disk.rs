//! Where a loaded database's bytes go: every table's heap, indexes and TOAST, per message
//! and against the raw bytes the clients sent. On one PostgreSQL from its catalogue; on a
//! Citus coordinator from the shards on the workers (`citus_*_size`), since the
//! coordinator's own tables are empty shells.
use sqlx::PgPool;

/// A table's bytes: (name, total, heap, indexes, TOAST).
type TableBytes = (String, i64, i64, i64, i64);

const ONE_POSTGRESQL: &str =
    "select c.relname::text, pg_total_relation_size(c.oid), pg_relation_size(c.oid),
         pg_indexes_size(c.oid),
         coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)
     from pg_class c
     where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace
     order by 2 desc";

/// On Citus the sizes summed over every shard of each distributed table (a reference
/// table counted once per node holding it); TOAST here is the table's size less its main
/// fork (TOAST with the free-space and visibility maps).
const CITUS: &str =
    "select p.logicalrelid::regclass::text, citus_total_relation_size(p.logicalrelid),
         citus_relation_size(p.logicalrelid),
         citus_total_relation_size(p.logicalrelid) - citus_table_size(p.logicalrelid),
         citus_table_size(p.logicalrelid) - citus_relation_size(p.logicalrelid)
     from pg_dist_partition p
     order by 2 desc";

/// The dead row versions in messages: the coordinator's statistics, or every shard's.
const DEAD_ONE_POSTGRESQL: &str = "select coalesce(sum(n_dead_tup), 0)::bigint from pg_stat_user_tables where relname = 'messages'";
const DEAD_CITUS: &str = "select coalesce(sum(result::bigint), 0)::bigint
     from run_command_on_shards('messages',
         $$select n_dead_tup from pg_stat_user_tables where relid = '%s'::regclass$$)";

/// Whether `pool`'s database is a Citus coordinator's.
pub async fn is_citus(pool: &PgPool) -> bool {
    sqlx::query_scalar("select exists (select 1 from pg_extension where extname = 'citus')")
        .fetch_one(pool)
        .await
        .expect("look for the citus extension")
}

/// Prints the loaded database's bytes on disk against `raw`, the bytes the clients sent.
pub async fn storage(pool: &PgPool, raw: usize) {
    let citus = is_citus(pool).await;
    let messages: i64 = sqlx::query_scalar("select count(*) from messages")
        .fetch_one(pool)
        .await
        .expect("count messages");
    let tables: Vec<TableBytes> = sqlx::query_as(if citus { CITUS } else { ONE_POSTGRESQL })
        .fetch_all(pool)
        .await
        .expect("table sizes");
    let total: i64 = tables.iter().map(|t| t.1).sum();
    println!(
        "On disk after the load: {:.1} MB in all for {messages} messages, {:.0} bytes per \
         message; the raw bytes the clients sent (texts, tool calls): {:.1} MB, {:.0} per \
         message; **on disk / raw: {:.2}**.",
        total as f64 / 1e6,
        total as f64 / messages as f64,
        raw as f64 / 1e6,
        raw as f64 / messages as f64,
        total as f64 / raw as f64
    );
    println!();
    columns(pool, messages, citus).await;
    println!("table | total MB | heap MB | indexes MB | TOAST MB | bytes per message");
    println!("---|---|---|---|---|---");
    for (name, all, heap, indexes, toast) in tables.iter().filter(|t| t.1 >= 1 << 20) {
        println!(
            "{name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0}",
            *all as f64 / 1e6,
            *heap as f64 / 1e6,
            *indexes as f64 / 1e6,
            *toast as f64 / 1e6,
            *all as f64 / messages as f64
        );
    }
    println!();
}

/// A message row's columns as stored, per message, and the dead row versions.
async fn columns(pool: &PgPool, messages: i64, citus: bool) {
    let columns: (i64, i64, i64, i64, i64) = sqlx::query_as(
        "select coalesce(sum(pg_column_size(content)), 0)::bigint,
             coalesce(sum(pg_column_size(search)), 0)::bigint,
             coalesce(sum(pg_column_size(tool_calls)), 0)::bigint,
             coalesce(sum(pg_column_size(m.*)), 0)::bigint,
             coalesce(sum(octet_length(content)), 0)::bigint
         from messages m",
    )
    .fetch_one(pool)
    .await
    .expect("column sizes");
    let dead: i64 = sqlx::query_scalar(if citus {
        DEAD_CITUS
    } else {
        DEAD_ONE_POSTGRESQL
    })
    .fetch_one(pool)
    .await
    .expect("dead rows");
    let per = |bytes: i64| bytes as f64 / messages as f64;
    println!(
        "Per message, as stored (after any compression): the whole row {:.0} bytes, of \
         which content {:.0} (its text: {:.0}), search vector {:.0}, tool calls {:.0}; \
         {dead} dead row versions in messages (the search indexer rewrites each row once).",
        per(columns.3),
        per(columns.0),
        per(columns.4),
        per(columns.1),
        per(columns.2)
    );
    println!();
}
