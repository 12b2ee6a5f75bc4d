-- The statistics job yields to users. Its DDL (partitions created, merged, detached and dropped)
-- used to take its table locks one by one as it went, in its own order, while a link's deletion
-- deleted the link's rows from visit_dims, then visit_days, then visit_referrers (two triggers,
-- fired in name order): each could hold what the other waited for, and PostgreSQL ended the cycle
-- by failing one of them, often the user's statement. Now every statement that touches the three
-- statistics tables takes them in one order, visit_days, visit_referrers, visit_dims (the flush,
-- the owner's read link_stats, and the deletion below), and the job takes all of its locks up
-- front, in that order, before any DDL, waiting at most a short lock_timeout (below
-- deadlock_timeout, so that no waiter's deadlock check can ever find it in a cycle). When it
-- cannot have them it gives up at once, holding nothing, and the service runs it again soon.

-- A deleted link takes all its statistics with it in one trigger, in the tables' order.
drop trigger links_drop_visit_dims on links;
drop function drop_visit_dims();
create or replace function drop_visit_stats() returns trigger language plpgsql as $$
begin
  delete from visit_days where code = new.code;
  delete from visit_referrers where code = new.code;
  delete from visit_dims where code = new.code;
  return null;
end
$$;

-- The body of 0019's visit_stats_maintain, renamed: it runs once the locks are held.
alter function visit_stats_maintain(date, date, date) rename to visit_stats_maintain_locked;

-- The daily job's work on the statistics (visit_stats_maintain_locked, sql/0019), under ACCESS
-- EXCLUSIVE locks on the three tables and all their partitions, taken first and in the tables'
-- order. lock_timeout, set for the rest of the caller's transaction, is the smaller of 100 ms and
-- a quarter of deadlock_timeout (at least 1 ms: 0 would mean no limit). Returns the partitions of
-- visit_days dropped, or null when the locks could not be had in time: nothing was done, and
-- nothing is held.
create function visit_stats_maintain(p_keep_from date, p_first date, p_last date) returns int language plpgsql as $$
begin
  perform set_config('lock_timeout',
    greatest(1, least(100, floor(extract(epoch from current_setting('deadlock_timeout')::interval) * 1000 / 4)))::int || 'ms', true);
  begin
    lock table visit_days, visit_referrers, visit_dims in access exclusive mode;
  exception when lock_not_available then
    return null;
  end;
  return visit_stats_maintain_locked(p_keep_from, p_first, p_last);
end
$$;
