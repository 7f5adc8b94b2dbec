-- UpdateLedger under the session's row lock (session $1 of tenant $8): todos and notes inserted or replaced (a
-- seq of 0: the session had no message yet), removed notes deleted.
with upserted as (
    insert into ledger_entries as l (session_id, kind, key, text, seqs, status,
        tenant_id)
    select $1, u.kind, u.key, u.text,
        case when u.seq > 0 then array[u.seq] else '{}'::bigint[] end, u.status, $8
    from unnest($2::smallint[], $3::text[], $4::text[], $5::bigint[], $6::smallint[])
        as u(kind, key, text, seq, status)
    on conflict (session_id, kind, key, tenant_id) do update set
        text = excluded.text,
        seqs = case when excluded.seqs = '{}' or excluded.seqs <@ l.seqs then l.seqs
            else ctxd_ledger_seqs(l.seqs || excluded.seqs) end,
        -- Done is terminal, whatever the request (the engine decided so too).
        status = case when l.status = 3 then 3::smallint else excluded.status end,
        updated_at = excluded.updated_at
)
delete from ledger_entries
where session_id = $1 and tenant_id = $8 and kind = 5 and key = any($7::text[])
