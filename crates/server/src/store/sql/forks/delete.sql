-- Deletes session $1 (locked by the caller, read by no fork) with its whole log, writing
-- its SESSION_DELETED event in the same statement. $5: its tenant.
with s as (
   delete from sessions where id = $1 and tenant_id = $5
   returning id, tenant_id, external_id, event_seq, version, message_count
), ins as (
   insert into events (tenant_id, session_id, external_id, session_seq, kind,
       session_version, detail)
   select tenant_id, id, external_id, event_seq + 1, $2, version + 1, $3 from s
   returning id
)
select s.message_count, pg_notify($4, (select max(id) from ins)::text)::text from s
