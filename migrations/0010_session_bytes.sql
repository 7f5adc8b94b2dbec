-- Bytes of text a session's log holds (every message's counted_bytes: content, parts,
-- reasoning, tool calls, tool-call id, name), kept by each append, so a replica can
-- refuse an append that would take the session past its size limit without reading
-- the log. Sessions from before are measured once here.
alter table sessions add column content_bytes bigint not null default 0;

update sessions s set content_bytes = coalesce((
    select sum(octet_length(m.content) + octet_length(m.reasoning)
        + octet_length(m.tool_call_id) + octet_length(m.name)
        + coalesce(octet_length(m.parts::text), 0)
        + coalesce(octet_length(m.tool_calls::text), 0))
    from messages m where m.session_id = s.id), 0);
