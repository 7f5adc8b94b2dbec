-- The ledger entries the batch's appends yield ($49: a JSON array, one object per item
-- and (kind, key), merged by the engine), merged into each applied item's session's —
-- ledger.sql per item; change both together.
batch_ledger_found as (
    insert into ledger_entries as l (session_id, kind, key, text, seqs, run_seqs,
        run_codes, call_id, tenant_id)
    select s.id, e.kind, e.key, e.text, e.seqs, e.run_seqs, e.run_codes, e.call_id,
        s.tenant_id
    from jsonb_to_recordset($49::jsonb) as e(item int, kind smallint, key text, text text,
        seqs bigint[], run_seqs bigint[], run_codes int[], call_id text)
    join s on s.b_idx = e.item
    on conflict (session_id, kind, key, tenant_id) do update set
        text = excluded.text,
        seqs = ctxd_ledger_seqs(l.seqs || excluded.seqs),
        run_seqs = (l.run_seqs || excluded.run_seqs)
            [greatest(1, cardinality(l.run_seqs || excluded.run_seqs) - 7):],
        run_codes = (l.run_codes || excluded.run_codes)
            [greatest(1, cardinality(l.run_codes || excluded.run_codes) - 7):],
        call_id = coalesce(excluded.call_id, l.call_id),
        updated_at = excluded.updated_at
    returning l.session_id, l.kind, l.key
)
