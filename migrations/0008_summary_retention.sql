-- Retention by kind (file paths, commands, identifiers: how many the covered span had,
-- how many the summary lost), beside the totals in facts / facts_lost.
alter table summaries add column retention jsonb not null default '{}';
