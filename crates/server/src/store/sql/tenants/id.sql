select id from tenants where name = $1
