-- Exit statuses the batch's results show for commands of earlier appends ($50, by
-- item, with the item's session), on each applied item's session, found by the call
-- index (session, call id) — ledger.sql per item; change both together. The slot below
-- holds, when the batch also merges entries, the exception for the entries merged above
-- (one statement may change a row once).
batch_ledger_runs as (
    update ledger_entries l set
        seqs = ctxd_ledger_seqs(l.seqs || r.seq),
        run_seqs = (l.run_seqs || r.seq)[greatest(1, cardinality(l.run_seqs) - 6):],
        run_codes = (l.run_codes || r.exit_code)[greatest(1, cardinality(l.run_codes) - 6):],
        updated_at = now()
    from jsonb_to_recordset($50::jsonb) as r(item int, session bigint, call_id text,
        seq bigint, exit_code int)
    join s on s.b_idx = r.item and s.id = r.session
    where l.session_id = r.session and l.tenant_id = any($55::bigint[]) and l.call_id = r.call_id and l.kind = 2{merged}
)
