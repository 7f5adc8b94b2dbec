with s as (
   update sessions set event_seq = event_seq + cardinality($2::smallint[]),
       budget_status = coalesce($4, budget_status)
   where id = $1 and tenant_id = $6
   returning tenant_id, external_id, event_seq - cardinality($2::smallint[]) as base, version
), ins as (
   insert into events (tenant_id, session_id, external_id, session_seq, kind,
       session_version, detail)
   select s.tenant_id, $1, s.external_id, s.base + e.ord, e.kind, s.version, e.detail
   from s, unnest($2::smallint[], $3::jsonb[]) with ordinality as e(kind, detail, ord)
   returning id
)
select pg_notify($5, (select max(id) from ins)::text)
