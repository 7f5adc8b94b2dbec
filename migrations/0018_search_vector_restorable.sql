-- ctxd_search_vector, which the generated `search` columns of summaries and
-- ledger_entries call, called two functions of ctxd's own by their bare names. pg_restore
-- computes those columns with an empty search_path, so a dump of a ctxd database did not
-- restore ("function ctxd_search_excerpt(text) does not exist"). The same function,
-- written with built-in functions only (which every search_path finds): every value it
-- gives is unchanged, so nothing stored is recomputed.
create or replace function ctxd_search_vector(doc text)
returns tsvector language sql immutable parallel safe as $$
    select to_tsvector('english'::regconfig, translate(
        case when length(doc) <= 50000 then doc
            else left(doc, 40000) || ' ' || right(doc, 10000) end,
        '/\.', '   '))
$$;
