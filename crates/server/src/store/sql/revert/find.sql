-- One of a session's compaction records: by its event's session_seq ($2), or by a
-- summary it wrote ($3).
select {columns} from compactions
where session_id = $1 and tenant_id = $4
  and (($2::bigint is not null and event_seq = $2)
       or ($3::bigint is not null and $3 = any(summary_ids)))
order by id
limit 1
