-- The tenant of the first message (by the partial index messages_unindexed) whose search
-- vector is still to compute (none: no row), for the background indexer, which then
-- indexes that tenant's. One probe of the index: a `distinct` over every unindexed row
-- read them all, twice a second.
select tenant_id from messages where search is null limit 1
