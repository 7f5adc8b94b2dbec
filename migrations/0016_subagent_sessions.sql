-- Subagent sessions: a session created for a tool call of another session (its parent)
-- links to it, and FinishSession ends it, appending its final answer to the parent as
-- that tool call's result.
--
-- A link is written with the child's row and never changes. It has no foreign key to
-- sessions: like events, it outlives the sessions it names, so the events of a deleted
-- session (its SESSION_DELETED included) still belong to the trees it was in, and a
-- tree stays what it was at creation when a session in the middle of it is deleted.
-- Links of sessions gone with all their events are pruned with the events.
create table session_links (
    -- The child: sessions.id.
    session_id          bigint primary key,
    tenant_id           bigint not null references tenants (id) on delete cascade,
    -- The parent: sessions.id (it may have been deleted since).
    parent_id           bigint not null,
    -- The parent's tool call that spawned the child.
    parent_tool_call_id text not null,
    -- sessions.id of every ancestor, the tree's root first, the parent last. Each is
    -- older than the child, so no session can become its own ancestor.
    ancestors           bigint[] not null,
    created_at          timestamptz not null default now(),
    check (ancestors[cardinality(ancestors)] = parent_id),
    check (session_id > all (ancestors))
);
create index session_links_parent on session_links (parent_id, session_id);
-- Subtrees (`ancestors @> array[root]`): rollups, tree-scoped Search and SubscribeEvents.
create index session_links_ancestors on session_links using gin (ancestors);

-- When FinishSession ended the session; a finished session takes no more appends.
alter table sessions add column finished_at timestamptz;
