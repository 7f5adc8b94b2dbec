-- Exit statuses the batch's results show for commands of earlier appends ($50, by
-- item), on each applied item's session, except on entries its item merges into above
-- (one statement may change a row once) — ledger.sql per item; change both together.
batch_ledger_runs as (
    update ledger_entries l set
        seqs = ctxd_ledger_seqs(l.seqs || r.seq),
        run_seqs = (l.run_seqs || r.seq)[greatest(1, cardinality(l.run_seqs) - 6):],
        run_codes = (l.run_codes || r.exit_code)[greatest(1, cardinality(l.run_codes) - 6):],
        updated_at = now()
    from jsonb_to_recordset($50::jsonb) as r(item int, call_id text, seq bigint,
        exit_code int)
    join s on s.b_idx = r.item
    where l.session_id = s.id and l.kind = 2 and l.call_id = r.call_id
      and not exists (
          select 1 from jsonb_to_recordset($49::jsonb) as e(item int, kind smallint, key text)
          where e.item = r.item and e.kind = l.kind and e.key = l.key)
)
