-- Deletes session $1 that forks still read: renamed out of the id space (no client id
-- starts with '#'), marked deleted, its waiting jobs cancelled, its SESSION_DELETED
-- event written under the name it had ($2); $6: its tenant. Its rows stay until no fork
-- reads them.
with s as (
   update sessions set external_id = '#' || id, deleted_at = now(),
       version = version + 1, event_seq = event_seq + 1, updated_at = now()
   where id = $1 and tenant_id = $6
   returning id, tenant_id, event_seq, version, message_count
), cancelled as (
   update jobs set state = 'cancelled', finished_at = now()
   where session_id = $1 and tenant_id = $6 and state in ('available', 'retryable')
), ins as (
   insert into events (tenant_id, session_id, external_id, session_seq, kind,
       session_version, detail)
   select tenant_id, id, $2, event_seq, $3, version, $4 from s
   returning id
)
select s.message_count, pg_notify($5, (select max(id) from ins)::text)::text from s
