-- The response kept under the idempotency key.
kept_response as (
    insert into idempotency_keys (session_id, key, request_hash, response, tenant_id)
    select $1, $44, $45, $46::jsonb, s.tenant_id
    from s
)
