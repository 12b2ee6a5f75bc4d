-- claim_link_checks of 0026 walked every due check joined to its link and sorted them all: with a
-- backlog (every link of a large import is due at once) that was a whole-table join and sort on
-- each poll, a quarter of a second on the embedded engine at 67,000 due, holding every other
-- statement back (its one session runs one at a time). The due checks are now read from their
-- index in order, a few more than are wanted, and their links looked up by key; a check of a link
-- that does not redirect (deleted, disabled, suspended) is put off an hour rather than taken, so
-- it never holds the head of the line.
create or replace function claim_link_checks(p_node text, p_max int, p_per_minute int, p_lease int)
returns table (r_code text, r_url text, r_rules jsonb)
language plpgsql as $$
declare
  step interval := make_interval(secs => 60.0 / p_per_minute);
  burst int := greatest(1, p_per_minute / 12);
  start timestamptz;
  free int;
  n int;
begin
  select greatest(next_at, now() - step * burst) into start from link_check_pace where id = 1 for update;
  free := least(p_max, floor(extract(epoch from now() - start) / extract(epoch from step))::int);
  if free <= 0 then
    return;
  end if;
  return query
  with due as materialized (
    select c.code, c.next_check_at from link_checks c
    where c.next_check_at <= now() and (c.claimed_until is null or c.claimed_until < now())
    order by c.next_check_at
    limit free * 4
    for update of c skip locked
  ), sorted as materialized (
    select due.code, due.next_check_at,
           (l.deleted_at is null and l.disabled_at is null and l.suspended_at is null) as live
    from due left join links l on l.code = due.code
  ), put_off as (
    update link_checks c set next_check_at = now() + interval '1 hour'
    from sorted where c.code = sorted.code and sorted.live is not true
  ), claimed as (
    update link_checks c set claimed_by = p_node, claimed_until = now() + make_interval(secs => p_lease)
    from (select s.code from sorted s where s.live order by s.next_check_at limit free) pick
    where c.code = pick.code
    returning c.code
  )
  select l.code::text, l.url, coalesce(l.rules, '[]'::jsonb) from claimed join links l on l.code = claimed.code;
  get diagnostics n = row_count;
  if n > 0 then
    update link_check_pace set next_at = start + step * n where id = 1;
  end if;
end
$$;
