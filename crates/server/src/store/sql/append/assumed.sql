
        -- An assumed state (the replica's cached row, nothing read). The row version
        -- names the cached row unless a transaction id was reused after the database
        -- lost the transaction that made it (a crash or failover after an asynchronous
        -- commit): the version ($19, one past the cached row's) and the count of
        -- recorded builds ($55) must match too. None of the batch's new calls ($14)
        -- exists yet, and every call it answers ($17) exists unanswered.
        and version = $19 - 1 and builds = $55
        and not exists (
            select 1 from tool_calls t where t.session_id = $1 and t.tenant_id = $61
                and t.call_id = any($14::text[]))
        and (select count(*) from tool_calls t
             where t.session_id = $1 and t.tenant_id = $61 and t.call_id = any($17::text[])
               and t.result_seq is null)
            = cardinality($17::text[])