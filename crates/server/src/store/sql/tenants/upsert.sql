insert into tenants (name) values ($1)
on conflict (name) do update set name = excluded.name
returning id
