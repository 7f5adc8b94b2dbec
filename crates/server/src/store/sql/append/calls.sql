-- New tool calls; one answered within the batch carries its result seq (a
-- sub-statement cannot see rows another one inserts).
inserted_calls as (
    insert into tool_calls (session_id, call_id, call_seq, result_seq, tenant_id)
    select $1, c.id, c.call_seq, c.result_seq, s.tenant_id
    from s, unnest($14::text[], $15::bigint[], $16::bigint[]) as c(id, call_seq, result_seq)
)
