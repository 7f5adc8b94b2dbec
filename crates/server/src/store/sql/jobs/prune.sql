delete from jobs
where state in ('completed', 'discarded', 'cancelled')
  and finished_at < now() - make_interval(secs => $1)
