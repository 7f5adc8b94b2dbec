-- Every row a tenant owns carries its tenant, and every key holds it: a session's
-- messages, calls, views, summaries, ledger, jobs and events can then live together on
-- one node of a distributed PostgreSQL (Citus) distributed by tenant_id, as
-- docs/decisions/0028-citus-distribution.md decides. On one PostgreSQL nothing changes
-- but the keys: tenant_id comes last in each, so a lookup by id or by session still
-- uses the index.
--
-- A contract: binaries before this one write no tenant_id into these tables and name
-- the old keys in their `on conflict` clauses, so they refuse this schema (0023).

alter table messages add column tenant_id bigint;
alter table tool_calls add column tenant_id bigint;
alter table idempotency_keys add column tenant_id bigint;
alter table summaries add column tenant_id bigint;
alter table ledger_entries add column tenant_id bigint;
alter table session_lineage add column tenant_id bigint;
alter table message_views add column tenant_id bigint;
alter table summary_links add column tenant_id bigint;
alter table compactions add column tenant_id bigint;
alter table build_history add column tenant_id bigint;

update messages x set tenant_id = s.tenant_id from sessions s where s.id = x.session_id;
update tool_calls x set tenant_id = s.tenant_id from sessions s where s.id = x.session_id;
update idempotency_keys x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;
update summaries x set tenant_id = s.tenant_id from sessions s where s.id = x.session_id;
update ledger_entries x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;
update session_lineage x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;
update message_views x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;
update summary_links x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;
update compactions x set tenant_id = s.tenant_id from sessions s where s.id = x.session_id;
update build_history x set tenant_id = s.tenant_id
    from sessions s where s.id = x.session_id;

alter table messages alter column tenant_id set not null;
alter table tool_calls alter column tenant_id set not null;
alter table idempotency_keys alter column tenant_id set not null;
alter table summaries alter column tenant_id set not null;
alter table ledger_entries alter column tenant_id set not null;
alter table session_lineage alter column tenant_id set not null;
alter table message_views alter column tenant_id set not null;
alter table summary_links alter column tenant_id set not null;
alter table compactions alter column tenant_id set not null;
alter table build_history alter column tenant_id set not null;

-- The foreign keys that name the old keys go first.
alter table messages drop constraint messages_session_id_fkey;
alter table tool_calls drop constraint tool_calls_session_id_fkey;
alter table idempotency_keys drop constraint idempotency_keys_session_id_fkey;
alter table summaries drop constraint summaries_session_id_fkey;
alter table summaries drop constraint summaries_parent_id_fkey;
alter table jobs drop constraint jobs_session_id_fkey;
alter table ledger_entries drop constraint ledger_entries_session_id_fkey;
alter table session_lineage drop constraint session_lineage_session_id_fkey;
alter table session_lineage drop constraint session_lineage_ancestor_id_fkey;
alter table message_views drop constraint message_views_session_id_fkey;
alter table summary_links drop constraint summary_links_session_id_fkey;
alter table summary_links drop constraint summary_links_summary_id_fkey;
alter table compactions drop constraint compactions_session_id_fkey;
alter table build_history drop constraint build_history_session_id_fkey;

-- The keys, each with tenant_id last.
alter table sessions drop constraint sessions_pkey,
    add primary key (id, tenant_id);
alter table messages drop constraint messages_pkey,
    add primary key (session_id, seq, tenant_id);
alter table tool_calls drop constraint tool_calls_pkey,
    add primary key (session_id, call_id, tenant_id);
alter table idempotency_keys drop constraint idempotency_keys_pkey,
    add primary key (session_id, key, tenant_id);
alter table summaries drop constraint summaries_pkey,
    add primary key (id, tenant_id);
alter table jobs drop constraint jobs_pkey,
    add primary key (id, tenant_id);
drop index jobs_pending;
create unique index jobs_pending on jobs (session_id, kind, tenant_id)
    where state in ('available', 'running', 'retryable');
alter table events drop constraint events_pkey,
    add primary key (id, tenant_id);
alter table events drop constraint events_session_id_session_seq_key,
    add unique (session_id, session_seq, tenant_id);
alter table ledger_entries drop constraint ledger_entries_pkey,
    add primary key (id, tenant_id);
alter table ledger_entries drop constraint ledger_entries_session_id_kind_key_key,
    add unique (session_id, kind, key, tenant_id);
alter table session_lineage drop constraint session_lineage_pkey,
    add primary key (session_id, depth, tenant_id);
alter table message_views drop constraint message_views_pkey,
    add primary key (session_id, seq, tenant_id);
alter table summary_links drop constraint summary_links_pkey,
    add primary key (session_id, summary_id, tenant_id);
alter table compactions drop constraint compactions_pkey,
    add primary key (id, tenant_id);
alter table compactions drop constraint compactions_session_id_event_seq_key,
    add unique (session_id, event_seq, tenant_id);
alter table session_links drop constraint session_links_pkey,
    add primary key (session_id, tenant_id);
alter table build_history drop constraint build_history_pkey,
    add primary key (session_id, build, tenant_id);

-- The foreign keys again, each holding tenant_id.
alter table messages add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table tool_calls add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table idempotency_keys add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table summaries add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table summaries add foreign key (parent_id, tenant_id)
    references summaries (id, tenant_id);
alter table jobs add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table ledger_entries add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table session_lineage add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table session_lineage add foreign key (ancestor_id, tenant_id)
    references sessions (id, tenant_id);
alter table message_views add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table summary_links add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table summary_links add foreign key (summary_id, tenant_id)
    references summaries (id, tenant_id);
alter table compactions add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
alter table build_history add foreign key (session_id, tenant_id)
    references sessions (id, tenant_id) on delete cascade;
