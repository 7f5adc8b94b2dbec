-- A session's summaries by id: a fork takes the newest id of its source's as the limit of
-- what it inherits (sql/forks/create.sql), read from here instead of the table's id
-- sequence, which on a distributed database is not the node's the fork is written on.
create index summaries_by_session on summaries (session_id, id);
