-- A month's merge no longer holds the statistics tables for its copy. visit_stats_maintain took
-- ACCESS EXCLUSIVE on visit_days, visit_referrers and visit_dims for the whole job, a month's copy
-- included (some 40 s at the record size): every read of statistics, every flush and every link
-- deletion waited for it. Now:
--   * a deleted link's statistics are queued (visit_stats_orphans) rather than deleted by its
--     deletion; the job deletes them later, in small batches (visit_stats_purge), taking only the
--     locks any delete takes, in the tables' order, with the job's short lock_timeout;
--   * the job's locked step (visit_stats_maintain) only prepares the month: every day of it gets a
--     partition, each with a trigger counting the changes to its rows (visit_stats_merging);
--   * the copy (visit_stats_merge_copy) builds each table's month as a standalone table, rows in
--     key order, its key's index after, under the ACCESS SHARE a read takes: reads, flushes and
--     deletions go on. It runs in a REPEATABLE READ transaction and records the change count its
--     snapshot saw;
--   * the swap (visit_stats_merge_swap) takes ACCESS EXCLUSIVE on the three tables as the job does,
--     short lock_timeout, yielding when it cannot; if the count moved since the copy's snapshot
--     (a late flush of an old day, an import, a purge by another node), the copy is dropped and
--     made again on a later run. Otherwise it detaches and drops the days and attaches the month.

-- Codes of deleted links whose statistics rows are still to be deleted. Nothing reads a deleted
-- link's statistics (link_stats reads live links only; an export leaves these codes' rows out),
-- and codes are never given again (the tombstone keeps its code).
create table visit_stats_orphans (
  code text collate "C" primary key
);

create or replace function drop_visit_stats() returns trigger language plpgsql as $$
begin
  insert into visit_stats_orphans (code) values (new.code) on conflict do nothing;
  return null;
end
$$;

-- Deletes the statistics of up to p_limit queued codes, and dequeues them. Row-exclusive locks
-- taken first, in the tables' order (what any delete takes: reads and flushes go on), waiting at
-- most the job's lock_timeout (visit_stats_lock_timeout). Returns the codes done, or null when
-- the locks could not be had in time (an import holds the tables, the job's swap): nothing done.
create function visit_stats_lock_timeout() returns void language sql as $$
  select set_config('lock_timeout',
    greatest(1, least(100, floor(extract(epoch from current_setting('deadlock_timeout')::interval) * 1000 / 4)))::int || 'ms', true)
$$;

create function visit_stats_purge(p_limit int) returns int language plpgsql as $$
declare
  codes text[];
begin
  perform visit_stats_lock_timeout();
  begin
    lock table visit_days, visit_referrers, visit_dims, visit_stats_orphans in row exclusive mode;
  exception when lock_not_available then
    return null;
  end;
  select coalesce(array_agg(code), '{}') into codes
  from (select code from visit_stats_orphans order by code limit p_limit) q;
  if cardinality(codes) = 0 then
    return 0;
  end if;
  delete from visit_days where code = any(codes);
  delete from visit_referrers where code = any(codes);
  delete from visit_dims where code = any(codes);
  delete from visit_stats_orphans where code = any(codes);
  return cardinality(codes);
end
$$;

-- The month being merged: `changes` counts the row changes to its days since it was prepared
-- (visit_stats_merging_changed, on each of its day partitions); `copied` is the count the copy's
-- snapshot saw, null while there is no copy (tables <table>_YYYYMM_copy).
create table visit_stats_merging (
  month date primary key,
  changes bigint not null default 0,
  copied bigint
);

create function visit_stats_merging_changed() returns trigger language plpgsql as $$
begin
  update visit_stats_merging set changes = changes + 1 where month = tg_argv[0]::date;
  return null;
end
$$;

create function visit_stats_copy_name(p_table text, p_month date) returns text language sql immutable as $$
  select p_table || '_' || to_char(p_month, 'YYYYMM') || '_copy'
$$;

-- Drops a month's copies, if any (in the tables' order).
create function visit_stats_drop_copies(p_month date) returns void language plpgsql as $$
declare
  t text;
begin
  foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
    execute format('drop table if exists %I', visit_stats_copy_name(t, p_month));
  end loop;
end
$$;

-- Under the job's locks: the month p_month gets a partition for every day (moving any strays of it
-- from the default partitions: nothing of it lands there any more) and the change-counting trigger
-- on each, and becomes the month being merged. A month already prepared is left as it is; any
-- other month prepared before is forgotten (its copies dropped).
create function visit_stats_merge_prepare(p_month date) returns void language plpgsql as $$
declare
  t text;
  d date;
  next date := (p_month + interval '1 month')::date;
  stale date;
begin
  for stale in select month from visit_stats_merging where p_month is null or month <> p_month loop
    perform visit_stats_drop_copies(stale);
    delete from visit_stats_merging where month = stale;
  end loop;
  if p_month is null or exists (select from visit_stats_merging where month = p_month) then
    return;
  end if;
  foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
    for d in select generate_series(p_month, next - 1, interval '1 day')::date loop
      perform visit_stats_partition(t, d);
      execute format('create or replace trigger visit_stats_merging after insert or update or delete on %I '
        'for each row execute function visit_stats_merging_changed(%L)', t || '_' || to_char(d, 'YYYYMMDD'), p_month);
    end loop;
  end loop;
  insert into visit_stats_merging (month) values (p_month);
end
$$;

-- The job's locked work (visit_stats_maintain calls it under its locks): as before, but the month
-- is prepared for its merge rather than merged. Returns the partitions of visit_days dropped.
create or replace function visit_stats_maintain_locked(p_keep_from date, p_first date, p_last date) returns int language plpgsql as $$
declare
  t text;
  r record;
  d date;
  m date;
  dropped int := 0;
begin
  for r in
    select p.relname as parent, c.relname as part
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    where i.inhparent in ('visit_days'::regclass, 'visit_referrers'::regclass, 'visit_dims'::regclass)
      and (visit_stats_day_of(c.relname) < p_keep_from or visit_stats_month_of(c.relname) + interval '1 month' <= p_keep_from)
    order by c.relname
  loop
    execute format('alter table %I detach partition %I', r.parent, r.part);
    execute format('drop table %I', r.part);
    if r.parent = 'visit_days' then
      dropped := dropped + 1;
    end if;
  end loop;
  foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
    execute format('delete from %I where day < %L', t || '_default', p_keep_from);
    for d in execute format('select distinct day from %I', t || '_default') loop
      perform visit_stats_partition(t, d);
    end loop;
    for d in select generate_series(greatest(p_first, p_keep_from), p_last, interval '1 day')::date loop
      perform visit_stats_partition(t, d);
    end loop;
  end loop;
  select min(days.month) into m
  from (select date_trunc('month', visit_stats_day_of(c.relname))::date as month
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent in ('visit_days'::regclass, 'visit_referrers'::regclass, 'visit_dims'::regclass)) days
  where days.month >= p_keep_from and days.month + interval '1 month' <= p_first;
  perform visit_stats_merge_prepare(m);
  return dropped;
end
$$;

-- The copy of the month being merged, when it has none: one table per statistics table, made in
-- the caller's REPEATABLE READ transaction (the rows and the change count of one snapshot), under
-- ACCESS SHARE on the tables, as a read. Returns the month copied, or null when there was nothing
-- to copy. The caller's transaction fails with a serialization failure when a change counted
-- after its snapshot commits first: the copy is not kept, and is made again later.
create function visit_stats_merge_copy() returns date language plpgsql as $$
declare
  m date;
  seen bigint;
  next date;
  t text;
  copy text;
begin
  if current_setting('transaction_isolation') <> 'repeatable read' then
    raise exception 'visit_stats_merge_copy runs in a repeatable read transaction';
  end if;
  perform visit_stats_lock_timeout();
  select month, changes into m, seen from visit_stats_merging where copied is null order by month limit 1;
  if m is null then
    return null;
  end if;
  next := (m + interval '1 month')::date;
  foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
    copy := visit_stats_copy_name(t, m);
    execute format('create table %I (like %I including defaults including constraints)', copy, t);
    -- Rows in key order, so a link's month sits in a page or two for its reads; the key's index
    -- is built after them, cheaper than one index insert per row.
    execute format('insert into %I select * from %I where day >= %L and day < %L order by 1, 2', copy, t, m, next);
    execute format('alter table %I add constraint %I %s', copy, t || '_' || to_char(m, 'YYYYMM') || '_pkey',
      (select pg_get_constraintdef(oid) from pg_constraint where conrelid = t::regclass and contype = 'p'));
    execute format('alter table %I add check (day >= %L and day < %L)', copy, m, next); -- lets the attach skip its scan
  end loop;
  update visit_stats_merging set copied = seen where month = m;
  return m;
end
$$;

-- The swap of a copied month into place, under ACCESS EXCLUSIVE on the three tables taken first, in
-- their order, with the job's lock_timeout: its days detached and dropped, its strays deleted from
-- the default partitions, its copies attached as its partitions. Returns 'swapped'; 'redo' when
-- its rows changed since the copy's snapshot (the copies dropped: a later run copies again);
-- 'none' when no copy waits; null when the locks could not be had in time (nothing done).
create function visit_stats_merge_swap() returns text language plpgsql as $$
declare
  m date;
  seen bigint;
  now_changes bigint;
  next date;
  t text;
  part text;
  d text;
begin
  perform visit_stats_lock_timeout();
  begin
    lock table visit_days, visit_referrers, visit_dims in access exclusive mode;
  exception when lock_not_available then
    return null;
  end;
  select month, copied, changes into m, seen, now_changes from visit_stats_merging where copied is not null order by month limit 1;
  if m is null then
    return 'none';
  end if;
  if now_changes <> seen then
    perform visit_stats_drop_copies(m);
    update visit_stats_merging set copied = null where month = m;
    return 'redo';
  end if;
  next := (m + interval '1 month')::date;
  foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
    part := t || '_' || to_char(m, 'YYYYMM');
    for d in
      select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = t::regclass and visit_stats_day_of(c.relname) >= m and visit_stats_day_of(c.relname) < next
      order by c.relname
    loop
      execute format('alter table %I detach partition %I', t, d);
      execute format('drop table %I', d);
    end loop;
    execute format('delete from %I where day >= %L and day < %L', t || '_default', m, next);
    execute format('alter table %I rename to %I', visit_stats_copy_name(t, m), part);
    execute format('alter table %I attach partition %I for values from (%L) to (%L)', t, part, m, next);
  end loop;
  delete from visit_stats_merging where month = m;
  return 'swapped';
end
$$;

-- Replaced by visit_stats_merge_prepare, _copy and _swap.
drop function visit_stats_month(text, date);
