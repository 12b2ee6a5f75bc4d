-- Finished months merged into one partition. With one partition per day, a link's
-- statistics over 400 days planned and probed 3 × 403 partitions (110 ms to plan, 56 ms to run on
-- 1,000 busy links); with the months merged, about 3 × 45. The daily job merges at most one month
-- per run, the oldest whole month within retention that ended before yesterday, so its work is
-- bounded and no flush still writes to it. A merged month is <table>_YYYYMM, ranging over the
-- month; it is dropped when its last day passes retention. Until then its days past retention are
-- kept but never read (the service reads from the first day retained): at most a month longer.

-- The day a partition's name stands for (<table>_YYYYMMDD), or the first day of its month
-- (<table>_YYYYMM); null for any other name. A CASE, since a WHERE may evaluate its conditions in
-- any order: a name's date is read only once the name is known to hold one.
create function visit_stats_day_of(p_name text) returns date language sql immutable as $$
  select case when p_name ~ '_[0-9]{8}$' then to_date(right(p_name, 8), 'YYYYMMDD') end
$$;
create function visit_stats_month_of(p_name text) returns date language sql immutable as $$
  select case when p_name ~ '_[0-9]{6}$' then to_date(right(p_name, 6), 'YYYYMM') end
$$;

-- One table's month: its day partitions' rows (and any strays in the default partition) copied
-- into one partition of the month, the day partitions detached and dropped, the month attached.
-- Writers to those days wait (SHARE locks) so none is lost between the copy and the detach.
create function visit_stats_month(p_table text, p_month date) returns void language plpgsql as $$
declare
  part text := p_table || '_' || to_char(p_month, 'YYYYMM');
  next date := (p_month + interval '1 month')::date;
  days text[];
  d text;
begin
  if to_regclass(part) is not null then
    return;
  end if;
  select coalesce(array_agg(c.relname::text order by c.relname), '{}') into days
  from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = p_table::regclass
    and visit_stats_day_of(c.relname) >= p_month and visit_stats_day_of(c.relname) < next;
  foreach d in array days loop
    execute format('lock table %I in share mode', d);
  end loop;
  execute format('create table %I (like %I including defaults including constraints)', part, p_table);
  -- Rows in key order, so a link's month sits in a page or two for its reads; the key's index is
  -- built after them, cheaper than one index insert per row.
  execute format('insert into %I select * from %I where day >= %L and day < %L order by 1, 2', part, p_table, p_month, next);
  execute format('alter table %I add %s', part,
    (select pg_get_constraintdef(oid) from pg_constraint where conrelid = p_table::regclass and contype = 'p'));
  execute format('alter table %I add check (day >= %L and day < %L)', part, p_month, next); -- lets the attach skip its scan
  foreach d in array days loop
    execute format('alter table %I detach partition %I', p_table, d);
    execute format('drop table %I', d);
  end loop;
  execute format('delete from %I where day >= %L and day < %L', p_table || '_default', p_month, next);
  execute format('alter table %I attach partition %I for values from (%L) to (%L)', p_table, part, p_month, next);
end
$$;

-- A day inside a merged month has its partition already: the month's.
create or replace function visit_stats_partition(p_table text, p_day date) returns void language plpgsql as $$
declare
  part text := p_table || '_' || to_char(p_day, 'YYYYMMDD');
begin
  if to_regclass(part) is not null or to_regclass(p_table || '_' || to_char(p_day, 'YYYYMM')) is not null then
    return;
  end if;
  execute format('create table %I (like %I including defaults including constraints)', part, p_table);
  execute format('with moved as (delete from %I where day = %L returning *) insert into %I select * from moved',
    p_table || '_default', p_day, part);
  execute format('alter table %I add check (day = %L)', part, p_day); -- lets the attach skip its scan
  execute format('alter table %I attach partition %I for values from (%L) to (%L)', p_table, part, p_day, p_day + 1);
end
$$;

-- The daily job's work on the statistics: days before p_keep_from go (their partitions, and the
-- merged months whose last day is before it, detached and dropped; their strays deleted from the
-- default partitions); every day from p_first to p_last, and every day found in a default
-- partition, gets its partition; then the oldest whole month within retention that ended before
-- p_first, if it is still in days, is merged. Returns the partitions of visit_days dropped.
create or replace function visit_stats_maintain(p_keep_from date, p_first date, p_last date) returns int language plpgsql as $$
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
  if m is not null then
    foreach t in array array['visit_days', 'visit_referrers', 'visit_dims'] loop
      perform visit_stats_month(t, m);
    end loop;
  end if;
  return dropped;
end
$$;

-- The owner's read of one link's statistics (readStats), with a generic plan: planning the read
-- over some 135 partitions cost as much as running it (27 ms to 14 ms a read of 400 days, psql on
-- 1,000 busy links); the generic plan prunes the partitions as it starts, from the day range.
-- Rows as JSON arrays, not objects: json_build_object took 4 of a 400-day read's 14 ms.
create function link_stats(p_user uuid, p_code text, p_from date, p_to date)
returns table (r_days json, r_referrers json, r_dims json) language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return query select
    (select coalesce(json_agg(json_build_array(d.day, d.humans, d.bots, coalesce(d.uniques, 0), encode(d.sketch, 'hex')) order by d.day), '[]')
      from visit_days d where d.code = p_code and d.day between p_from and p_to),
    (select coalesce(json_agg(json_build_array(r.host, r.visits) order by r.visits desc, r.host), '[]')
      from (select v.host, sum(v.visits) as visits from visit_referrers v
        where v.code = p_code and v.day between p_from and p_to group by v.host) r),
    (select coalesce(json_agg(json_build_array(m.day, m.dim, m.value, m.visits) order by m.day, m.dim, m.visits desc, m.value), '[]')
      from visit_dims m where m.code = p_code and m.day between p_from and p_to)
  from live_links l where l.code = p_code and l.user_id = p_user;
end
$$;
