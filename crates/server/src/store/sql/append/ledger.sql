-- The ledger entries the batch yields ($57: a JSON array, one object per (kind, key),
-- merged by the engine), merged into the session's.
-- (updated_at from the insert's default, now(): a distributed database takes no function
-- in DO UPDATE that is not immutable.)
ledger_found as (
    insert into ledger_entries as l (session_id, kind, key, text, seqs, run_seqs,
        run_codes, call_id, tenant_id)
    select $1, e.kind, e.key, e.text, e.seqs, e.run_seqs, e.run_codes, e.call_id,
        s.tenant_id
    from s, jsonb_to_recordset($57::jsonb) as e(kind smallint, key text, text text,
        seqs bigint[], run_seqs bigint[], run_codes int[], call_id text)
    on conflict (session_id, kind, key, tenant_id) do update set
        text = excluded.text,
        seqs = ctxd_ledger_seqs(l.seqs || excluded.seqs),
        run_seqs = (l.run_seqs || excluded.run_seqs)
            [greatest(1, cardinality(l.run_seqs || excluded.run_seqs) - 7):],
        run_codes = (l.run_codes || excluded.run_codes)
            [greatest(1, cardinality(l.run_codes || excluded.run_codes) - 7):],
        call_id = coalesce(excluded.call_id, l.call_id),
        updated_at = excluded.updated_at
),
-- Exit statuses the batch's results show for commands of earlier appends ($58), except
-- on entries the batch merges into above (one statement may change a row once).
ledger_runs as (
    update ledger_entries l set
        seqs = ctxd_ledger_seqs(l.seqs || r.seq),
        run_seqs = (l.run_seqs || r.seq)[greatest(1, cardinality(l.run_seqs) - 6):],
        run_codes = (l.run_codes || r.exit_code)[greatest(1, cardinality(l.run_codes) - 6):],
        updated_at = now()
    from s, jsonb_to_recordset($58::jsonb) as r(call_id text, seq bigint, exit_code int)
    where l.session_id = $1 and l.tenant_id = $61 and l.kind = 2 and l.call_id = r.call_id
      and not exists (
          select 1 from jsonb_to_recordset($57::jsonb) as e(kind smallint, key text)
          where e.kind = l.kind and e.key = l.key)
)
