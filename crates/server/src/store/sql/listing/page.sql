-- A page of a tenant's sessions, most recently updated first (ties: the newest id
-- first), after the cursor ($11 updated_at, $12 id) when there is one. Each filter
-- applies only when given. Deleted sessions (kept while a fork reads their rows) are
-- not listed.
select {columns}
from sessions s
where s.tenant_id = $1
  and s.deleted_at is null
  and ($2::jsonb is null or s.metadata @> $2)
  and ($3::text is null or exists (
      select 1 from session_links l join sessions p on p.id = l.parent_id
      where l.session_id = s.id and l.tenant_id = $1 and p.tenant_id = $1
        and p.external_id = $3))
  and ($4::text is null or s.forked_from = $4)
  and ($5::boolean is null or (s.finished_at is not null) = $5)
  and ($6::timestamptz is null or s.created_at >= $6)
  and ($7::timestamptz is null or s.created_at < $7)
  and ($8::timestamptz is null or s.updated_at >= $8)
  and ($9::timestamptz is null or s.updated_at < $9)
  and ($13::text is null or starts_with(s.external_id, $13))
  and ($11::timestamptz is null or (s.updated_at, s.id) < ($11, $12))
order by s.updated_at desc, s.id desc
limit $10
