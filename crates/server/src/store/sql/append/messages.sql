-- The batch.
inserted_messages as (
    insert into messages (session_id, seq, turn, role, content, parts, reasoning,
        tool_calls, tool_call_id, name, metadata, pinned, token_count, view_tokens,
        view_state, tenant_id)
    select $1, m.seq, m.turn, m.role, m.content, m.parts::jsonb, m.reasoning,
        m.tool_calls::jsonb, m.tool_call_id, m.name, m.metadata::jsonb, m.pinned,
        m.token_count, m.view_tokens, m.view_state, s.tenant_id
    from s, unnest($2::bigint[], $3::bigint[], $4::smallint[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bool[],
        $13::int[], $36::int[], $37::smallint[])
        as m(seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id,
             name, metadata, pinned, token_count, view_tokens, view_state)
)
