-- Pending first, then the newest.
select {columns} from jobs j where j.session_id = $1
order by (j.state in ('available', 'running', 'retryable')) desc, j.id desc limit 1
