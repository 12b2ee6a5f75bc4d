-- The visit statistics partitioned by UTC day: visit_days (with each day's visitor
-- sketch), visit_referrers and visit_dims each get one native range partition per day, named
-- <table>_YYYYMMDD, created ahead by the service's own daily job; retention detaches and drops
-- whole days, whatever their size, and never touches the rows it keeps. A row for a day without
-- its partition (an import of old days, a clock far ahead) lands in <table>_default, and the job
-- moves it into its day's partition. The daily salt stays one row a day in visit_salts, deleted
-- the day after; the per-visitor rows it once served are gone since 0010 (the sketches).
-- The existing rows are copied into their days' partitions here: docs/decisions.md has the time
-- this takes per million rows; it holds the tables' locks, so flushes of other nodes wait.

-- The partition of one table for one day, created when missing, with that day's rows moved in from
-- the default partition (attaching checks the default holds none of the day's any more).
create function visit_stats_partition(p_table text, p_day date) returns void language plpgsql as $$
declare
  part text := p_table || '_' || to_char(p_day, 'YYYYMMDD');
begin
  if to_regclass(part) is not null then
    return;
  end if;
  execute format('create table %I (like %I including defaults including constraints)', part, p_table);
  execute format('with moved as (delete from %I where day = %L returning *) insert into %I select * from moved',
    p_table || '_default', p_day, part);
  execute format('alter table %I add check (day = %L)', part, p_day); -- lets the attach skip its scan
  execute format('alter table %I attach partition %I for values from (%L) to (%L)', p_table, part, p_day, p_day + 1);
end
$$;

-- The daily job's work on the statistics: days before p_keep_from go (their partitions detached
-- and dropped, their strays deleted from the default partitions); every day from p_first to
-- p_last, and every day found in a default partition, gets its partition. Returns the days dropped.
create function visit_stats_maintain(p_keep_from date, p_first date, p_last date) returns int language plpgsql as $$
declare
  t text;
  r record;
  d date;
  dropped int := 0;
begin
  for r in
    select p.relname as parent, c.relname as part
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    where i.inhparent in ('visit_days'::regclass, 'visit_referrers'::regclass, 'visit_dims'::regclass)
      and c.relname ~ '_[0-9]{8}$' and to_date(right(c.relname, 8), 'YYYYMMDD') < p_keep_from
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
  return dropped;
end
$$;

-- The tables of 0003, 0010 and 0015 step aside, with their indexes' names.
alter table visit_days rename to visit_days_0015;
alter index visit_days_pkey rename to visit_days_0015_pkey;
drop index visit_days_day;
alter table visit_referrers rename to visit_referrers_0015;
alter index visit_referrers_pkey rename to visit_referrers_0015_pkey;
drop index visit_referrers_day;
alter table visit_dims rename to visit_dims_0015;
alter index visit_dims_pkey rename to visit_dims_0015_pkey;
drop index visit_dims_day;

create table visit_days (
  code    text not null collate "C",
  day     date not null,
  humans  bigint not null default 0,
  bots    bigint not null default 0,
  uniques bigint,
  sketch  bytea,
  primary key (code, day)
) partition by range (day);
create table visit_days_default partition of visit_days default;

create table visit_referrers (
  code   text not null collate "C",
  day    date not null,
  host   text not null collate "C",
  visits bigint not null,
  primary key (code, day, host)
) partition by range (day);
create table visit_referrers_default partition of visit_referrers default;

create table visit_dims (
  code   text not null collate "C",
  day    date not null,
  dim    text not null collate "C" check (dim in ('device', 'browser', 'os', 'country')),
  value  text not null collate "C",
  visits bigint not null,
  primary key (code, day, dim, value)
) partition by range (day);
create table visit_dims_default partition of visit_dims default;

-- Each day of the old rows gets its partition, then the rows are routed to them.
do $$
declare
  d date;
begin
  for d in select day from visit_days_0015 union select day from visit_referrers_0015 union select day from visit_dims_0015 loop
    perform visit_stats_partition('visit_days', d);
    perform visit_stats_partition('visit_referrers', d);
    perform visit_stats_partition('visit_dims', d);
  end loop;
end
$$;
insert into visit_days (code, day, humans, bots, uniques, sketch)
  select code, day, humans, bots, uniques, sketch from visit_days_0015;
insert into visit_referrers (code, day, host, visits) select code, day, host, visits from visit_referrers_0015;
insert into visit_dims (code, day, dim, value, visits) select code, day, dim, value, visits from visit_dims_0015;
drop table visit_days_0015, visit_referrers_0015, visit_dims_0015;
