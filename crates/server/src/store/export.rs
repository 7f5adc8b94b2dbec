//! ExportSession's reads and ImportSession's one transaction (the file itself is the
//! core's `export` module). An imported session is a root session of its own: a fork's
//! inherited messages and summaries are written as its own rows.
use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Value, json};
use sqlx::types::Json;

use super::sessions::{CreateTx, SessionRow, with_session_columns};
use super::{Store, StoreResult};
use crate::export::{Import, State, SummaryRecord};
use crate::ledger::Entry;
use crate::session::{Session, Summary};

/// The session columns an import sets from the file's state (the rest start as a new
/// session's, or are set by the statement itself).
const STATE_COLUMNS: &str = "version, message_count, turn_count, log_tokens, content_bytes, view_tokens, \
    last_turn_tokens, view_first_seq, view_epoch, anchor_reported_tokens, anchor_fixed_tokens, \
    anchor_history_tokens, anchor_first_seq, anchor_last_seq, anchor_view_epoch, \
    anchor_delta_ratio, est_samples, est_abs_err_sum, est_max_abs_err, est_last_err, \
    usage_input_tokens, usage_output_tokens, usage_cached_tokens, cleared_messages, \
    evicted_messages, builds, extending_builds, last_build_first_seq, last_build_last_seq, \
    last_build_system_tokens, last_build_tool_tokens, last_build_history_tokens, \
    last_build_estimate_tokens, last_build_view_epoch, summary_tokens, summaries_written, \
    compaction_failures, budget_status, compaction_resume_log_tokens";

static INSERT_SESSION_SQL: LazyLock<String> = LazyLock::new(|| {
    let state = STATE_COLUMNS
        .split(',')
        .map(|column| format!("r.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    with_session_columns(&format!(
        "insert into sessions (tenant_id, external_id, policy, metadata, created_at, \
         finished_at, forked_from, {STATE_COLUMNS})
         select $1, $2, $3, $4, $5, $6, $7, {state}
         from jsonb_populate_record(null::sessions, $8) r
         returning {{columns}}"
    ))
});

const INSERT_MESSAGES_SQL: &str = "insert into messages (session_id, seq, turn, role, content, \
    parts, reasoning, tool_calls, tool_call_id, name, metadata, pinned, token_count, \
    view_tokens, view_state, created_at, tenant_id)
    select $1, r.seq, r.turn, r.role, r.content, r.parts, r.reasoning, r.tool_calls, \
        r.tool_call_id, r.name, r.metadata, r.pinned, r.token_count, r.view_tokens, \
        r.view_state, r.created_at, $3
    from jsonb_populate_recordset(null::messages, $2) r";

const INSERT_CALLS_SQL: &str =
    "insert into tool_calls (session_id, call_id, call_seq, result_seq, \
    tenant_id)
    select $1, r.call_id, r.call_seq, r.result_seq, $3
    from jsonb_populate_recordset(null::tool_calls, $2) r";

/// Ids for `$1` new summaries, taken from the table's own sequence.
const SUMMARY_IDS_SQL: &str =
    "select nextval(pg_get_serial_sequence('summaries', 'id')) from generate_series(1, $1)";

/// The summaries, each with the id taken for it and its parent's (one statement: the
/// parent references are checked at its end).
const INSERT_SUMMARIES_SQL: &str = "insert into summaries (id, session_id, depth, first_seq, \
    last_seq, content, token_count, level, source_tokens, facts, facts_lost, retention, \
    reverted_at, created_at, parent_id, tenant_id)
    overriding system value
    select r.id, $1, r.depth, r.first_seq, r.last_seq, r.content, r.token_count, r.level, \
        r.source_tokens, r.facts, r.facts_lost, r.retention, r.reverted_at, r.created_at, \
        r.parent_id, $3
    from jsonb_populate_recordset(null::summaries, $2) r";

const INSERT_LEDGER_SQL: &str = "insert into ledger_entries (session_id, kind, key, text, seqs, \
    run_seqs, run_codes, status, tenant_id)
    select $1, r.kind, r.key, r.text, r.seqs, r.run_seqs, r.run_codes, r.status, $3
    from jsonb_populate_recordset(null::ledger_entries, $2) with ordinality as r
    order by r.ordinality";

/// A summary row's bookkeeping the export adds to what [`Summary`] carries.
#[derive(sqlx::FromRow)]
struct SummaryDates {
    id: i64,
    created_at: chrono::DateTime<chrono::Utc>,
    reverted_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Store {
    /// The summaries `session` sees, each with its parent in the session's tree: the
    /// trees under its active summaries, then those under the ones reverts took out
    /// of its view (at most `max_reverted`), each tree walked from its root.
    pub async fn export_summaries(
        &self,
        session: &Session,
        max_reverted: i64,
    ) -> StoreResult<Vec<SummaryRecord>> {
        let mut roots = self.active_summaries(session).await?;
        roots.extend(super::summaries::reverted(self.db(), session, max_reverted).await?);
        let mut tree: Vec<(Summary, Option<i64>)> =
            roots.into_iter().map(|root| (root, None)).collect();
        let mut next = 0;
        // Breadth first: each summary's children, asked for one parent at a time so
        // each child knows its parent in this session's tree.
        while next < tree.len() {
            let parent = tree[next].0.id;
            next += 1;
            for child in self.summary_children(session, &[parent]).await? {
                if tree.iter().all(|(seen, _)| seen.id != child.id) {
                    tree.push((child, Some(parent)));
                }
            }
        }
        let ids: Vec<i64> = tree.iter().map(|(summary, _)| summary.id).collect();
        let dates: HashMap<i64, SummaryDates> = sqlx::query_as::<_, SummaryDates>(
            "select id, created_at, reverted_at from summaries where id = any($1) and tenant_id = $2",
        )
        .bind(&ids)
        .bind(session.tenant_id)
        .fetch_all(self.db())
        .await?
        .into_iter()
        .map(|dates| (dates.id, dates))
        .collect();
        Ok(tree
            .into_iter()
            .map(|(summary, parent)| {
                let dates = dates.get(&summary.id);
                summary_record(summary, parent, dates)
            })
            .collect())
    }
}

fn summary_record(
    summary: Summary,
    parent: Option<i64>,
    dates: Option<&SummaryDates>,
) -> SummaryRecord {
    SummaryRecord {
        id: summary.id,
        parent,
        depth: summary.depth,
        first_seq: summary.first_seq,
        last_seq: summary.last_seq,
        content: summary.content,
        tokens: summary.token_count,
        level: summary.level,
        source_tokens: summary.source_tokens,
        facts: summary.facts,
        facts_lost: summary.facts_lost,
        retention: summary.retention,
        reverted_at: dates.and_then(|dates| dates.reverted_at),
        created_at: dates.map_or_else(chrono::Utc::now, |dates| dates.created_at),
    }
}

impl CreateTx {
    /// Writes the imported session as `external_id` and commits. A taken id surfaces as
    /// a unique violation; nothing is written unless everything is.
    pub async fn import(mut self, external_id: &str, import: &Import) -> StoreResult<Session> {
        let record = &import.session;
        let row: SessionRow = sqlx::query_as(INSERT_SESSION_SQL.as_str())
            .bind(self.tenant_id)
            .bind(external_id)
            .bind(Json(&record.policy))
            .bind(Json(&record.metadata))
            .bind(record.created_at)
            .bind(record.finished_at)
            .bind(record.forked_from.as_deref())
            .bind(Json(state_columns(&record.state)))
            .fetch_one(self.conn())
            .await?;
        let session = Session::from(row);
        let id = session.id;
        sqlx::query(INSERT_MESSAGES_SQL)
            .bind(id)
            .bind(Json(message_rows(import)))
            .bind(self.tenant_id)
            .execute(self.conn())
            .await?;
        sqlx::query(INSERT_CALLS_SQL)
            .bind(id)
            .bind(Json(call_rows(import)))
            .bind(self.tenant_id)
            .execute(self.conn())
            .await?;
        self.insert_summaries(id, &import.summaries).await?;
        sqlx::query(INSERT_LEDGER_SQL)
            .bind(id)
            .bind(Json(ledger_rows(&import.ledger)))
            .bind(self.tenant_id)
            .execute(self.conn())
            .await?;
        self.tx.commit().await?;
        Ok(session)
    }

    /// Writes the summaries under ids of this server's, each linked to its parent's.
    async fn insert_summaries(
        &mut self,
        session_id: i64,
        summaries: &[SummaryRecord],
    ) -> StoreResult<()> {
        if summaries.is_empty() {
            return Ok(());
        }
        let taken: Vec<i64> = sqlx::query_scalar(SUMMARY_IDS_SQL)
            .bind(summaries.len() as i64)
            .fetch_all(self.conn())
            .await?;
        let ids: HashMap<i64, i64> = summaries.iter().map(|s| s.id).zip(taken).collect();
        let rows: Vec<Value> = summaries
            .iter()
            .map(|s| {
                json!({
                    "id": ids[&s.id], "parent_id": s.parent.and_then(|parent| ids.get(&parent)),
                    "depth": s.depth, "first_seq": s.first_seq, "last_seq": s.last_seq,
                    "content": s.content, "token_count": s.tokens, "level": s.level,
                    "source_tokens": s.source_tokens, "facts": s.facts,
                    "facts_lost": s.facts_lost, "retention": s.retention,
                    "reverted_at": s.reverted_at, "created_at": s.created_at,
                })
            })
            .collect();
        sqlx::query(INSERT_SUMMARIES_SQL)
            .bind(session_id)
            .bind(Json(rows))
            .bind(self.tenant_id)
            .execute(self.conn())
            .await?;
        Ok(())
    }

    fn conn(&mut self) -> super::pooler::Conn<'_> {
        super::pooler::Conn::new(&mut self.tx, self.pooler)
    }
}

/// The state as the session columns it sets, by name.
fn state_columns(state: &State) -> Value {
    let anchor = state.anchor.unwrap_or(crate::budget::Anchor {
        reported_tokens: 0,
        fixed_tokens: 0,
        history_tokens: 0,
        first_seq: 0,
        last_seq: 0,
        view_epoch: 0,
        delta_ratio: 0.0,
    });
    let last = &state.last_build;
    json!({
        "version": state.version, "message_count": state.message_count, "turn_count": state.turn_count,
        "log_tokens": state.log_tokens, "content_bytes": state.content_bytes,
        "view_tokens": state.view_tokens, "last_turn_tokens": state.last_turn_tokens,
        "view_first_seq": state.view_first_seq, "view_epoch": state.view_epoch,
        "anchor_reported_tokens": anchor.reported_tokens, "anchor_fixed_tokens": anchor.fixed_tokens,
        "anchor_history_tokens": anchor.history_tokens, "anchor_first_seq": anchor.first_seq,
        "anchor_last_seq": anchor.last_seq, "anchor_view_epoch": anchor.view_epoch,
        "anchor_delta_ratio": anchor.delta_ratio, "est_samples": state.est_samples,
        "est_abs_err_sum": state.est_abs_err_sum, "est_max_abs_err": state.est_max_abs_err,
        "est_last_err": state.est_last_err, "usage_input_tokens": state.usage_input_tokens,
        "usage_output_tokens": state.usage_output_tokens,
        "usage_cached_tokens": state.usage_cached_tokens,
        "cleared_messages": state.cleared_messages, "evicted_messages": state.evicted_messages,
        "builds": state.builds, "extending_builds": state.extending_builds,
        "last_build_first_seq": last.first_seq, "last_build_last_seq": last.last_seq,
        "last_build_system_tokens": last.system_tokens, "last_build_tool_tokens": last.tool_tokens,
        "last_build_history_tokens": last.history_tokens,
        "last_build_estimate_tokens": last.estimate_tokens,
        "last_build_view_epoch": last.view_epoch, "summary_tokens": state.summary_tokens,
        "summaries_written": state.summaries_written,
        "compaction_failures": state.compaction_failures,
        "budget_status": state.budget_status.code(),
        "compaction_resume_log_tokens": state.compaction_resume_log_tokens,
    })
}

fn message_rows(import: &Import) -> Vec<Value> {
    import
        .messages
        .iter()
        .map(|stored| {
            let m = &stored.message;
            json!({
                "seq": stored.seq, "turn": stored.turn, "role": m.role as i16,
                "content": m.content, "parts": (!m.parts.is_empty()).then_some(&m.parts),
                "reasoning": m.reasoning,
                "tool_calls": (!m.tool_calls.is_empty()).then_some(&m.tool_calls),
                "tool_call_id": m.tool_call_id, "name": m.name, "metadata": m.metadata,
                "pinned": m.pinned, "token_count": stored.token_count,
                "view_tokens": stored.view_tokens,
                "view_state": stored.view_state as i16,
                "created_at": stored.created_at,
            })
        })
        .collect()
}

fn call_rows(import: &Import) -> Vec<Value> {
    let answers: HashMap<&str, i64> = import
        .answers
        .iter()
        .map(|(id, seq)| (id.as_str(), *seq))
        .collect();
    import
        .calls
        .iter()
        .map(|(id, seq)| json!({"call_id": id, "call_seq": seq, "result_seq": answers.get(id.as_str())}))
        .collect()
}

fn ledger_rows(ledger: &[Entry]) -> Vec<Value> {
    ledger
        .iter()
        .map(|entry| {
            json!({
                "kind": entry.kind as i16, "key": entry.key, "text": entry.text,
                "seqs": entry.seqs,
                "run_seqs": entry.runs.iter().map(|run| run.result_seq).collect::<Vec<_>>(),
                "run_codes": entry.runs.iter().map(|run| run.exit_code).collect::<Vec<_>>(),
                "status": entry.status.map(|status| status as i16),
            })
        })
        .collect()
}
