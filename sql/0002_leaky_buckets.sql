-- Leaky-bucket counters shared by every node: failed logins per account, and the
-- per-account and per-address allowance of password changes and account deletions. A level
-- drains at its own rate; empty_at says when it will be empty, so idle rows can be swept.

create table leaky_buckets (
  key      text primary key,
  level    double precision not null,
  empty_at timestamptz not null,
  updated_at timestamptz not null
);
create index leaky_buckets_empty_at on leaky_buckets (empty_at);

-- One atomic statement: lock the row (creating it empty), drain it for the time elapsed, then add
-- one if that keeps the level within p_limit. Returns whether it was added, and the new level.
create function leaky_bucket_add(p_key text, p_limit double precision, p_drain_per_second double precision)
returns table (added boolean, level double precision)
language plpgsql as $$
declare
  l double precision;
  u timestamptz;
  now_ts timestamptz;
begin
  insert into leaky_buckets as b (key, level, empty_at, updated_at) values (p_key, 0, clock_timestamp(), clock_timestamp())
  on conflict (key) do update set key = b.key
  returning b.level, b.updated_at into l, u;
  now_ts := clock_timestamp();
  l := greatest(0, l - greatest(0, extract(epoch from now_ts - u)) * p_drain_per_second);
  added := l + 1 <= p_limit;
  if added then
    l := l + 1;
  end if;
  update leaky_buckets as b
  set level = l, updated_at = now_ts, empty_at = now_ts + make_interval(secs => l / p_drain_per_second)
  where b.key = p_key;
  level := l;
  return next;
end
$$;
