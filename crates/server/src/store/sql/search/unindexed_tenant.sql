-- A tenant with a message whose search vector is still to compute (none: null), for the
-- background indexer, which then indexes that tenant's.
select tenant_id from messages where search is null limit 1
