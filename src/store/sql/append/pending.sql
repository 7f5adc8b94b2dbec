
        -- The pending job of kind $59 the append relies on, as the replica knew it
        -- (job $60; null: none is pending) — a job can end without touching this row.
        and (select j.id from jobs j
             where j.session_id = $1 and j.kind = $59
               and j.state in ('available', 'running', 'retryable'))
            is not distinct from $60
