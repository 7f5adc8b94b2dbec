select {columns} from events where session_id = $1 and session_seq > $2
order by session_seq limit $3
