insert into sessions (tenant_id, external_id, policy, metadata)
values ($1, $2, $3, $4) returning {columns}
