with gone as (
   delete from events where created_at < now() - make_interval(secs => $1)
   returning tenant_id, tx, id
), newest as (
   select distinct on (tenant_id) tenant_id, tx, id from gone
   order by tenant_id, tx desc, id desc
), marked as (
   insert into events_pruned (tenant_id, tx, id) select tenant_id, tx, id from newest
   on conflict (tenant_id) do update set tx = excluded.tx, id = excluded.id
   where (events_pruned.tx, events_pruned.id) < (excluded.tx, excluded.id)
)
select count(*) from gone
