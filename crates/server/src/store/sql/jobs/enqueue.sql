with inserted as (
   insert into jobs (tenant_id, session_id, kind, args, priority,
       max_attempts, notify_done)
   values ($1, $2, $3, $4, $5, $6, $7)
   on conflict (session_id, kind, tenant_id)
       where state in ('available', 'running', 'retryable')
   do nothing
   returning id
),
-- A new pending job changes what an append decides (it enqueues
-- none of its own): touching the row makes an append that read it
-- before retry (its write is guarded by the row's xmin).
touched as (
   update sessions set updated_at = now()
   where id = $2 and tenant_id = $1 and exists (select 1 from inserted)
)
select id, true from inserted
union all
select id, false from jobs
where session_id = $2 and tenant_id = $1 and kind = $3
  and state in ('available', 'running', 'retryable')
  and not exists (select 1 from inserted)
