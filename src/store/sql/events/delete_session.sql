with s as (
   delete from sessions where tenant_id = $1 and external_id = $2
   returning id, tenant_id, external_id, event_seq, version, message_count
), ins as (
   insert into events (tenant_id, session_id, external_id, session_seq, kind,
       session_version, detail)
   select tenant_id, id, external_id, event_seq + 1, $3, version + 1, $4 from s
   returning id
)
select s.message_count, pg_notify($5, (select max(id) from ins)::text) from s
