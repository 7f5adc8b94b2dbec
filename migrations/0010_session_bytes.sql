-- Bytes of text a session's log holds (every message's `Message::counted_bytes`:
-- content, text parts and media URIs, reasoning, each tool call's id, name and
-- arguments, the tool-call id, the name), kept by each append, so a replica can refuse
-- an append that would take the session past its size limit without reading the log.
-- Sessions from before are measured once here, field by field as the code counts.
alter table sessions add column content_bytes bigint not null default 0;

update sessions s set content_bytes = coalesce((
    select sum(octet_length(m.content) + octet_length(m.reasoning)
        + octet_length(m.tool_call_id) + octet_length(m.name)
        + (select coalesce(sum(octet_length(coalesce(p ->> 'text', p ->> 'uri', ''))), 0)
           from jsonb_array_elements(coalesce(m.parts, '[]'::jsonb)) p)
        + (select coalesce(sum(octet_length(coalesce(c ->> 'id', ''))
                             + octet_length(coalesce(c ->> 'name', ''))
                             + octet_length(coalesce(c ->> 'arguments', ''))), 0)
           from jsonb_array_elements(coalesce(m.tool_calls, '[]'::jsonb)) c))
    from messages m where m.session_id = s.id), 0);
