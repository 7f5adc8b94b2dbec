//! Full-text search over messages and summaries (generated tsvector columns, GIN
//! indexes; migration 0007).
use super::Store;

/// The update half of [`Store::index_messages`].
macro_rules! index_batch {
    () => {
        " update messages m
          set search = ctxd_search_vector(ctxd_message_doc(m.content, m.parts, m.reasoning, m.tool_calls, m.name))
          from batch b where m.session_id = b.session_id and m.seq = b.seq"
    };
}

/// What to look for, and where.
#[derive(Debug, Clone)]
pub struct SearchQuery<'a> {
    pub tenant_id: i64,
    /// sessions.id; None: every session of the tenant.
    pub session_id: Option<i64>,
    /// Web-search syntax (websearch_to_tsquery: never a syntax error).
    pub query: &'a str,
    /// Message roles (the proto's numbers); empty: all.
    pub roles: Vec<i16>,
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    pub messages: bool,
    pub summaries: bool,
    pub limit: i64,
}

/// One hit: a message (seq > 0) or a summary (summary_id > 0).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SearchHit {
    pub external_id: String,
    pub seq: i64,
    pub summary_id: i64,
    pub depth: i32,
    pub role: i16,
    /// The proto's ViewState numbers; 4 (summarized) also for a message a summary covers.
    pub view_state: i16,
    pub first_seq: i64,
    pub last_seq: i64,
    pub rank: f32,
    pub snippet: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Store {
    /// Computes the search vector of up to `limit` messages that have none yet, of one
    /// tenant and/or session (None: any). With `wait`, rows another indexer holds are
    /// waited for (Search's catch-up must not miss them); otherwise skipped. Returns how
    /// many were indexed.
    pub async fn index_messages(
        &self,
        tenant_id: Option<i64>,
        session_id: Option<i64>,
        limit: i64,
        wait: bool,
    ) -> Result<u64, sqlx::Error> {
        let query = if wait {
            sqlx::query(concat!(
                "with batch as (select m.session_id, m.seq from messages m
                    join sessions s on s.id = m.session_id
                    where m.search is null and ($1::bigint is null or s.tenant_id = $1)
                      and ($2::bigint is null or m.session_id = $2)
                    order by m.session_id, m.seq limit $3 for update of m)",
                index_batch!()
            ))
        } else {
            sqlx::query(concat!(
                "with batch as (select m.session_id, m.seq from messages m
                    join sessions s on s.id = m.session_id
                    where m.search is null and ($1::bigint is null or s.tenant_id = $1)
                      and ($2::bigint is null or m.session_id = $2)
                    order by m.session_id, m.seq limit $3 for update of m skip locked)",
                index_batch!()
            ))
        };
        Ok(query
            .bind(tenant_id)
            .bind(session_id)
            .bind(limit)
            .execute(self.pool())
            .await?
            .rows_affected())
    }

    /// The best `limit` hits, best first, each with a snippet (matches between « »).
    pub async fn search(&self, query: &SearchQuery<'_>) -> Result<Vec<SearchHit>, sqlx::Error> {
        sqlx::query_as(
            "with q as (select websearch_to_tsquery('english', ctxd_search_text($2)) as q),
             hits as (
                (select m.session_id, m.seq, 0::bigint as summary_id, 0 as depth, m.role,
                        case when m.seq < s.view_first_seq then 4::smallint else m.view_state end
                            as view_state,
                        0::bigint as first_seq, 0::bigint as last_seq,
                        ts_rank_cd(m.search, q.q) as rank, m.created_at
                 from q, messages m join sessions s on s.id = m.session_id
                 where $7 and s.tenant_id = $1 and ($3::bigint is null or m.session_id = $3)
                   and m.search @@ q.q
                   and (cardinality($4::smallint[]) = 0 or m.role = any($4))
                   and ($5::timestamptz is null or m.created_at >= $5)
                   and ($6::timestamptz is null or m.created_at < $6)
                 order by rank desc limit $9)
                union all
                (select su.session_id, 0::bigint, su.id, su.depth, 0::smallint, 0::smallint,
                        su.first_seq, su.last_seq, ts_rank_cd(su.search, q.q) as rank, su.created_at
                 from q, summaries su join sessions s on s.id = su.session_id
                 where $8 and s.tenant_id = $1 and ($3::bigint is null or su.session_id = $3)
                   and su.search @@ q.q
                   and ($5::timestamptz is null or su.created_at >= $5)
                   and ($6::timestamptz is null or su.created_at < $6)
                 order by rank desc limit $9)
             ), top as (
                select * from hits order by rank desc, created_at desc limit $9
             )
             select s.external_id, top.seq, top.summary_id, top.depth, top.role, top.view_state,
                    top.first_seq, top.last_seq, top.rank, top.created_at,
                    ts_headline('english', ctxd_search_text(
                        left(case when top.seq > 0 then
                            (select ctxd_message_doc(m.content, m.parts, m.reasoning, m.tool_calls, m.name)
                             from messages m where m.session_id = top.session_id and m.seq = top.seq)
                        else (select su.content from summaries su where su.id = top.summary_id) end, 100000)),
                        (select q from q),
                        'StartSel=«, StopSel=», MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=\" … \"')
                        as snippet
             from top join sessions s on s.id = top.session_id
             order by top.rank desc, top.created_at desc",
        )
        .bind(query.tenant_id)
        .bind(query.query)
        .bind(query.session_id)
        .bind(&query.roles)
        .bind(query.since)
        .bind(query.until)
        .bind(query.messages)
        .bind(query.summaries)
        .bind(query.limit)
        .fetch_all(self.pool())
        .await
    }
}
