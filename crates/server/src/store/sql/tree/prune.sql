-- Links of sessions that are gone and whose events are all pruned: nothing of them is
-- left for a tree to hold.
delete from session_links l
where not exists (
      select 1 from sessions s where s.id = l.session_id and s.tenant_id = l.tenant_id)
  and not exists (
      select 1 from events e where e.session_id = l.session_id and e.tenant_id = l.tenant_id)
