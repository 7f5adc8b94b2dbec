-- The old key of a rotation expires after the grace period, or sooner if it already did.
update api_keys
set expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2))
where id = $1
returning expires_at
