-- The seq of the newest user message at or before $2 in session $1's log (null: none),
-- each range read backwards from its end, so only the last turn is scanned.
select max(u.seq) from {segments:$3} g,
lateral (select m.seq from messages m
         where m.session_id = g.owner and m.tenant_id = $3 and m.role = 2
           and m.seq between g.first_seq and least(g.last_seq, $2)
         order by m.seq desc limit 1) u
