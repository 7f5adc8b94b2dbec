
        -- An assumed state (the replica's cached row, nothing read): none of the batch's
        -- new calls ($14) exists yet, and every call it answers ($17) exists unanswered.
        and not exists (
            select 1 from tool_calls t where t.session_id = $1 and t.call_id = any($14::text[]))
        and (select count(*) from tool_calls t
             where t.session_id = $1 and t.call_id = any($17::text[]) and t.result_seq is null)
            = cardinality($17::text[])