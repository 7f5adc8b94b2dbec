-- The compactions still in force from record $2 on, newest first: what reverting $2
-- undoes.
select {columns} from compactions
where session_id = $1 and tenant_id = $3 and id >= $2 and reverted_at is null
order by id desc
