//! The schema as a distributed PostgreSQL (Citus) needs it, checked on the migrated
//! schema of one PostgreSQL, without Citus: every table is placed
//! (`store::distribution`), every primary and unique key of a table distributed by
//! tenant holds `tenant_id`, and no foreign key joins tables placed differently or
//! distributed tables on anything but the tenant. The statements are checked by the
//! store's own tests (`store::distribution`, `every_statement_stays_on_one_tenant…`).
use ctxd::store::distribution::{Placement, placement, tables};
use sqlx::PgPool;

/// The schema's tables but sqlx's record of migrations.
async fn schema_tables(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar(
        "select tablename::text from pg_tables
         where schemaname = 'public' and tablename <> '_sqlx_migrations' order by 1",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Every primary and unique key (constraints and unique indexes alike): table, name,
/// columns.
async fn unique_keys(pool: &PgPool) -> Vec<(String, String, Vec<String>)> {
    sqlx::query_as(
        "select c.relname::text, i.relname::text,
             array(select a.attname::text from unnest(x.indkey) k
                   join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k)
         from pg_index x
         join pg_class c on c.oid = x.indrelid
         join pg_class i on i.oid = x.indexrelid
         where x.indisunique and c.relnamespace = 'public'::regnamespace
           and c.relname <> '_sqlx_migrations'
         order by 1, 2",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Every foreign key: table, referenced table, and its column pairs (column,
/// referenced column).
async fn foreign_keys(pool: &PgPool) -> Vec<(String, String, Vec<String>, Vec<String>)> {
    sqlx::query_as(
        "select c.conrelid::regclass::text, c.confrelid::regclass::text,
             array(select a.attname::text from unnest(c.conkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n
                   order by k.o),
             array(select a.attname::text from unnest(c.confkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n
                   order by k.o)
         from pg_constraint c
         where c.contype = 'f' and c.connamespace = 'public'::regnamespace
         order by 1, 2",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "ctxd::store::MIGRATOR")]
async fn every_table_is_placed_and_each_placed_table_exists(pool: PgPool) {
    let schema = schema_tables(&pool).await;
    let unplaced: Vec<&String> = schema.iter().filter(|t| placement(t).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "tables with no placement: {unplaced:?}"
    );
    let missing: Vec<&str> = tables()
        .map(|t| t.name)
        .filter(|name| !schema.iter().any(|t| t == name))
        .collect();
    assert!(
        missing.is_empty(),
        "placed tables not in the schema: {missing:?}"
    );
}

/// The keys of distributed tables that do not hold `tenant_id`.
async fn keys_without_tenant(pool: &PgPool) -> Vec<String> {
    unique_keys(pool)
        .await
        .into_iter()
        .filter(|(table, _, columns)| {
            placement(table) == Some(Placement::ByTenant)
                && !columns.iter().any(|c| c == "tenant_id")
        })
        .map(|(table, key, columns)| format!("{table}.{key} {columns:?}"))
        .collect()
}

/// The foreign keys a database distributed by tenant refuses.
async fn refused_foreign_keys(pool: &PgPool) -> Vec<String> {
    let mut wrong = Vec::new();
    for (table, referenced, columns, referenced_columns) in foreign_keys(pool).await {
        let allowed = match (placement(&table), placement(&referenced)) {
            // Any table may point at a reference table (never the other way).
            (Some(_), Some(Placement::Reference)) => true,
            // Two distributed tables: on the tenant, column to column.
            (Some(Placement::ByTenant), Some(Placement::ByTenant)) => columns
                .iter()
                .zip(&referenced_columns)
                .any(|(c, r)| c == "tenant_id" && r == "tenant_id"),
            _ => false,
        };
        if !allowed {
            wrong.push(format!(
                "{table} {columns:?} -> {referenced} {referenced_columns:?}"
            ));
        }
    }
    wrong
}

#[sqlx::test(migrator = "ctxd::store::MIGRATOR")]
async fn every_key_of_a_distributed_table_holds_the_tenant(pool: PgPool) {
    let wrong = keys_without_tenant(&pool).await;
    assert!(wrong.is_empty(), "keys without tenant_id: {wrong:#?}");
}

#[sqlx::test(migrator = "ctxd::store::MIGRATOR")]
async fn foreign_keys_join_distributed_tables_on_the_tenant_only(pool: PgPool) {
    let wrong = refused_foreign_keys(&pool).await;
    assert!(
        wrong.is_empty(),
        "foreign keys a distributed database refuses: {wrong:#?}"
    );
}

/// The checks read what they check: a key without the tenant, and a foreign key
/// between distributed tables on another column, are found.
#[sqlx::test(migrator = "ctxd::store::MIGRATOR")]
async fn a_key_or_foreign_key_without_the_tenant_is_found(pool: PgPool) {
    sqlx::query("create unique index summaries_by_id_alone on summaries (id)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "alter table summary_links add constraint links_by_id_alone
         foreign key (summary_id) references summaries (id)",
    )
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(
        keys_without_tenant(&pool).await,
        ["summaries.summaries_by_id_alone [\"id\"]"]
    );
    assert_eq!(
        refused_foreign_keys(&pool).await,
        ["summary_links [\"summary_id\"] -> summaries [\"id\"]"]
    );
}
