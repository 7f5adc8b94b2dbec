-- The response kept under the idempotency key, with the id of the job enqueued.
kept_response as (
    insert into idempotency_keys (session_id, key, request_hash, response, tenant_id)
    select $1, $44, $45,
        case when exists (select 1 from enqueued)
            then jsonb_set($46::jsonb, '{summarization_job_id}',
                           to_jsonb((select id from enqueued)))
            else $46::jsonb end,
        s.tenant_id
    from s
)
