//! Asks a real Citus coordinator how it plans each statement file of the store:
//! `CTXD_CITUS_URL` names a database placed by `ctxd migrate --distribute`
//! (`scripts/citus/run` starts one). The statements the store's own check passes must
//! run on one node (a router plan, one task, no subplans); those it lists as planned in
//! parts (`PLANNED_IN_PARTS`), and those Citus refuses (`REFUSED_BY_CITUS`), must not. Ignored unless run by that script: CI has no
//! Citus (its source cannot be fetched there).
use ctxd::store::distribution::{
    ACROSS_TENANTS, ONE_POSTGRESQL_ONLY, PLANNED_IN_PARTS, REFUSED_BY_CITUS, written_out,
};
use sqlx::{Connection, PgConnection};

/// Every SQL file of the store that is a whole statement (not a part of one, as the
/// append's parts are kept), with its text.
fn statements() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/server/src/store/sql");
    let mut found = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let name = path.strip_prefix(&root).unwrap().display().to_string();
            let sql = std::fs::read_to_string(&path).unwrap();
            if is_whole(&sql) {
                found.push((name, sql));
            }
        }
    }
    found.sort();
    found
}

/// Whether `sql` starts (after its comments) as a statement does.
fn is_whole(sql: &str) -> bool {
    let first = sql
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with("--"))
        .unwrap_or_default();
    let word = first
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next();
    matches!(
        word,
        Some("select" | "with" | "insert" | "update" | "delete")
    )
}

/// `sql` with the store's placeholders filled as the store fills them, the column
/// lists as `*` and the optional parts left out.
fn filled(sql: &str) -> String {
    let mut sql = written_out(sql).replace("{columns}", "*");
    for part in [
        "{assumed}",
        "{skip_locked}",
        "{parts}",
        "{ledger}",
        "{outputs}",
        "{merged}",
    ] {
        sql = sql.replace(part, "");
    }
    sql
}

/// Which parameter of `sql` is the tenant: the one compared with `tenant_id`, else
/// the value an insert gives its `tenant_id` column.
fn tenant_parameter(sql: &str) -> Option<String> {
    let parameter = |rest: &str| -> Option<String> {
        let digits: String = rest
            .strip_prefix('$')?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty()).then(|| format!("${digits}"))
    };
    if let Some(found) = sql.split("tenant_id = ").skip(1).find_map(parameter) {
        return Some(found);
    }
    // insert into t (a, tenant_id, …) values ($1, $2, …): the value in its place.
    let (columns, rest) = sql.split_once(')')?;
    let position = columns
        .rsplit('(')
        .next()?
        .split(',')
        .position(|c| c.trim() == "tenant_id")?;
    let values = rest.split_once("values (")?.1.split_once(')')?.0;
    parameter(values.split(',').nth(position)?.trim())
}

/// A value of `kind` (a type's name) for a probe: the tenant's id for the tenant,
/// something plain of the type otherwise.
fn value(kind: &str, tenant: Option<i64>) -> String {
    if let Some(tenant) = tenant {
        return tenant.to_string();
    }
    if kind.ends_with("[]") {
        return format!("'{{}}'::{kind}");
    }
    let plain = match kind {
        "bigint" | "integer" | "smallint" | "double precision" | "numeric" | "real" => "1",
        "boolean" => "false",
        "jsonb" | "json" => "'{}'",
        "bytea" => "'\\x00'",
        "timestamp with time zone" => "now()",
        _ => "'x'",
    };
    format!("{plain}::{kind}")
}

/// How Citus plans `sql` for tenant `tenant`: its EXPLAIN with plain values.
async fn plan(conn: &mut PgConnection, sql: &str, tenant: i64) -> Result<String, String> {
    // The last file's statement, if it was prepared.
    let _ = sqlx::raw_sql("deallocate probe").execute(&mut *conn).await;
    // The store's own statement text, prepared as it is.
    let prepare = format!("prepare probe as {sql}");
    sqlx::raw_sql(sqlx::AssertSqlSafe(prepare))
        .execute(&mut *conn)
        .await
        .map_err(|e| format!("prepare: {e}"))?;
    let kinds: Vec<String> = sqlx::query_scalar(
        "select t::regtype::text from pg_prepared_statements,
             unnest(parameter_types) with ordinality as p(t, n)
         where name = 'probe' order by n",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    let tenant_at = tenant_parameter(sql);
    let values: Vec<String> = (1..)
        .zip(&kinds)
        .map(|(n, kind)| {
            let is_tenant = tenant_at.as_deref() == Some(format!("${n}").as_str());
            value(kind, is_tenant.then_some(tenant))
        })
        .collect();
    let arguments = if values.is_empty() {
        String::new()
    } else {
        format!("({})", values.join(", "))
    };
    let explain = format!("explain (costs off) execute probe{arguments}");
    let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(explain))
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| format!("explain: {e}"))?;
    Ok(rows
        .into_iter()
        .map(|(line,)| line)
        .collect::<Vec<_>>()
        .join("\n"))
}

/// A router plan: one task on one node, nothing planned apart; or a statement that
/// reads no distributed table itself and runs on the coordinator (a function call).
fn routed(plan: &str) -> bool {
    let on_coordinator = !plan.contains("Custom Scan (Citus");
    on_coordinator || (plan.contains("Task Count: 1") && !plan.contains("Distributed Subplan"))
}

#[tokio::test]
#[ignore = "needs a Citus coordinator: scripts/citus/run"]
async fn citus_routes_exactly_the_statements_the_check_passes() {
    let url = std::env::var("CTXD_CITUS_URL").expect("CTXD_CITUS_URL");
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let tenant: i64 = sqlx::query_scalar(
        "insert into tenants (name) values ('citus-probe')
         on conflict (name) do update set name = excluded.name returning id",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let mut wrong = Vec::new();
    let mut report = Vec::new();
    for (name, sql) in statements() {
        if ACROSS_TENANTS.iter().any(|(file, _)| *file == name)
            || ONE_POSTGRESQL_ONLY.contains(&name.as_str())
        {
            continue;
        }
        let expected = !PLANNED_IN_PARTS.contains(&name.as_str())
            && !REFUSED_BY_CITUS.iter().any(|(file, _)| *file == name);
        match plan(&mut conn, &filled(&sql), tenant).await {
            Ok(plan) => {
                let got = routed(&plan);
                report.push(format!(
                    "{name}: {}",
                    if got { "routed" } else { "in parts" }
                ));
                if got != expected {
                    wrong.push(format!("{name}: expected routed={expected}\n{plan}"));
                }
            }
            // A statement Citus refuses to plan at all is not routed either.
            Err(error) => {
                report.push(format!("{name}: refused ({error})"));
                if expected {
                    wrong.push(format!("{name}: {error}"));
                }
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The cluster's URL and a name no earlier run on it used.
fn cluster() -> (String, String) {
    let url = std::env::var("CTXD_CITUS_URL").expect("CTXD_CITUS_URL");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    (url, format!("c{nanos}"))
}

/// Twelve tasks racing appends, a keyed retry racing itself and builds on one session
/// of the cluster, written by `ctxd_append` on the tenant's worker: every append lands
/// exactly once, the log gap-free (tests/it/replicas.rs).
#[tokio::test]
#[ignore = "needs a Citus coordinator: scripts/citus/run"]
async fn racing_appends_land_once_on_the_cluster() {
    let (url, name) = cluster();
    let store = ctxd::store::Store::connect(&url, 16).await.unwrap();
    let server = crate::harness::TestServer::start_on_store(store).await;
    crate::replicas::racing_appends_land_once(&server, &name).await;
    server.stop().await;
}

/// Three `ctxd serve` replicas on the cluster share a burst of summarization jobs: each
/// job done once, each session's summaries applied once (tests/it/jobs.rs).
#[tokio::test]
#[ignore = "needs a Citus coordinator: scripts/citus/run"]
async fn a_burst_of_jobs_is_applied_once_on_the_cluster() {
    let (url, name) = cluster();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    crate::jobs::burst_of_jobs_applied_once(&pool, &url, &format!("{name}-")).await;
    // Every session's events on the cluster numbered 1, 2, 3… without a gap.
    let gapped: Vec<String> = sqlx::query_scalar(
        "select external_id from events group by session_id, external_id
         having min(session_seq) <> 1 or max(session_seq) <> count(*)
             or count(distinct session_seq) <> count(*)",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(gapped.is_empty(), "events with gaps: {gapped:?}");
}

/// A corpus session compacted on the cluster (a clearing, then summaries), both reverted
/// by reverting the first: the builds, aggregates and summaries as before, byte for byte;
/// a fork of it grows on its own while the source's build stays; each session's events
/// numbered 1, 2, 3… without a gap, and the tenant's stream carrying them all, each
/// once, in order (tests/it/revert.rs).
#[tokio::test]
#[ignore = "needs a Citus coordinator: scripts/citus/run"]
async fn compactions_revert_and_forks_grow_apart_on_the_cluster() {
    use crate::harness::{append, build, user};
    use crate::revert::*;
    use ctxd::pb;
    let (url, name) = cluster();
    let store = ctxd::store::Store::connect(&url, 16).await.unwrap();
    let server = crate::harness::TestServer::start_on_store(store).await;
    let mut client = server.client.clone();
    let (id, fork) = (format!("{name}-s"), format!("{name}-fork"));
    corpus_session(&mut client, &id, &[0, 1, 2], corpus_policy()).await;
    let before = snapshot(&mut client, &id).await;
    let built = build(&mut client, &id, pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let tokens = built.budget.unwrap().breakdown.unwrap().total_tokens;

    let cleared = compact(
        &mut client,
        &id,
        pb::CompactMode::ClearToolResults,
        tokens / 2,
    )
    .await;
    assert!(cleared.applied, "{cleared:?}");
    let summarized = compact(&mut client, &id, pb::CompactMode::Summarize, tokens / 4).await;
    assert!(summarized.applied, "{summarized:?}");
    let events = session_events(&mut client, &id).await;
    let clearing = of_kind(&events, pb::EventKind::ToolResultsCleared).remove(0);
    let done = revert(&mut client, by_cursor(&id, &clearing.cursor, false))
        .await
        .unwrap();
    assert!(done.applied && done.reverted.len() >= 2, "{done:?}");
    assert_restored(
        &snapshot(&mut client, &id).await,
        &before,
        "reverted on the cluster",
    );

    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: id.clone(),
            session_id: fork.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    append(&mut client, &fork, vec![user("and now on the fork alone")])
        .await
        .unwrap();
    let forked = build(&mut client, &fork, pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(
        forked.messages.last().unwrap().content,
        "and now on the fork alone"
    );
    assert_restored(
        &snapshot(&mut client, &id).await,
        &before,
        "the source after a fork",
    );
    let mut by_session = Vec::new();
    for session in [&id, &fork] {
        let seqs: Vec<i64> = session_events(&mut client, session)
            .await
            .iter()
            .map(|event| event.session_seq)
            .collect();
        assert_eq!(
            seqs,
            (1..=seqs.len() as i64).collect::<Vec<_>>(),
            "{session}"
        );
        by_session.push(seqs);
    }
    // The tenant's stream carries both sessions' events, each once, in each session's
    // order (the cluster's database is shared by earlier runs: only these two counted).
    // An empty session id subscribes to the tenant's stream.
    let tenant = session_events(&mut client, "").await;
    for (session, seqs) in [&id, &fork].into_iter().zip(by_session) {
        let delivered: Vec<i64> = tenant
            .iter()
            .filter(|event| &event.session_id == session)
            .map(|event| event.session_seq)
            .collect();
        assert_eq!(delivered, seqs, "{session} on the tenant's stream");
    }
    server.stop().await;
}
