-- Accounts, sessions and links (spec §2, contract §3-§4).

create table users (
  id            uuid primary key default gen_random_uuid(),
  -- stored in lowercase; login compares exactly (spec §5.5)
  username      text not null unique collate "C",
  display_name  text not null,
  password_hash text not null,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);

create table sessions (
  -- SHA-256 of the bearer token; the token itself is never stored
  token_hash bytea primary key,
  user_id    uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sessions_user_id on sessions (user_id);
create index sessions_expires_at on sessions (expires_at);

-- A deleted link stays as a tombstone (user_id, url and location null, deleted_at set) so that
-- its code is never assigned again (contract §4): the primary key alone enforces that.
create table links (
  code            text primary key collate "C",
  id              bigint generated always as identity unique,
  user_id         uuid references users (id) on delete set null,
  url             text,
  -- the url as an ASCII Location header value, computed once on write (contract §5)
  location        text,
  visits          bigint not null default 0,
  last_visited_at timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  deleted_at      timestamptz,
  check ((deleted_at is null) = (user_id is not null and url is not null and location is not null))
);
create index links_user_newest on links (user_id, id desc) where deleted_at is null;

-- Shared token buckets for the login/registration rate limit when several nodes share the
-- database (contract §7). One row per client address; idle rows are swept.
create table rate_buckets (
  key        text primary key,
  tokens     double precision not null,
  updated_at timestamptz not null
);
create index rate_buckets_updated_at on rate_buckets (updated_at);

-- One atomic statement per request: lock the bucket (creating it full), refill it from the
-- elapsed time, then take one token if a whole one is there.
create function take_rate_token(p_key text, p_capacity double precision, p_per_second double precision)
returns table (allowed boolean, remaining double precision)
language plpgsql as $$
declare
  t double precision;
  u timestamptz;
  now_ts timestamptz;
begin
  insert into rate_buckets as b (key, tokens, updated_at) values (p_key, p_capacity, clock_timestamp())
  on conflict (key) do update set key = b.key
  returning b.tokens, b.updated_at into t, u;
  now_ts := clock_timestamp();
  t := least(p_capacity, t + greatest(0, extract(epoch from now_ts - u)) * p_per_second);
  allowed := t >= 1;
  if allowed then
    t := t - 1;
  end if;
  update rate_buckets set tokens = t, updated_at = now_ts where key = p_key;
  remaining := t;
  return next;
end
$$;
