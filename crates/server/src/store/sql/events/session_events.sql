select {columns} from events
where session_id = $1 and tenant_id = $4 and session_seq > $2
order by session_seq limit $3
