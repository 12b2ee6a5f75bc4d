-- What a link owner sees and controls: link expiry, per-day visit statistics and
-- listable sessions.

-- A link may expire: /r/{code} then answers 410 and counts nothing. Null: never.
alter table links add column expires_at timestamptz;

-- Sessions get a public id (never the token or its digest) and a coarse last use, written at
-- most once a minute per session so that authentication stays a read.
alter table sessions add column id uuid not null unique default gen_random_uuid();
alter table sessions add column last_used_at timestamptz not null default now();

-- Redirects per link and UTC day, split into humans and bots. `uniques` is the count of distinct
-- human visitors, filled in once the day is over and its visitor hashes are reduced; null until
-- then (the live count is in visit_hashes). No address, full referrer URL or cookie is stored.
create table visit_days (
  code    text not null collate "C",
  day     date not null,
  humans  bigint not null default 0,
  bots    bigint not null default 0,
  uniques bigint,
  primary key (code, day)
);
create index visit_days_day on visit_days (day);
-- the days the daily job has yet to reduce: a few, however long the history
create index visit_days_unreduced on visit_days (day) where uniques is null;

-- Visits per link, day and referrer host: at most 20 hosts per link and day, then "other";
-- "direct" when there was no Referer.
create table visit_referrers (
  code   text not null collate "C",
  day    date not null,
  host   text not null collate "C",
  visits bigint not null,
  primary key (code, day, host)
);
create index visit_referrers_day on visit_referrers (day);

-- The day's distinct human visitors of a link: SHA-256 of (the day's salt, code, client address,
-- user agent), truncated to 16 bytes. Reduced to visit_days.uniques and deleted
-- once the day is over.
create table visit_hashes (
  day  date not null,
  code text not null collate "C",
  hash bytea not null,
  -- day first: the table holds a day or two, and the daily job takes whole days
  primary key (day, code, hash)
);

-- The salt of each UTC day that still has hashes. Every node and worker must hash with the same
-- salt for uniques to be exact, so it is shared here; UNLOGGED keeps it out of the WAL, so out of
-- replicas, WAL archives and base backups, and a crash empties it. It is deleted with the day's
-- hashes. (pg_dump copies unlogged tables unless given --no-unlogged-table-data.)
create unlogged table visit_salts (
  day  date primary key,
  salt bytea not null
);

-- A deleted link (a tombstone: deleted_at set, by deleting the link or its account) takes its
-- statistics with it, whichever statement deleted it.
create function drop_visit_stats() returns trigger language plpgsql as $$
begin
  delete from visit_days where code = new.code;
  delete from visit_referrers where code = new.code;
  -- hashes are a day or two old (older ones are the daily job's): keep to the primary key's range
  delete from visit_hashes where day >= current_date - 3 and code = new.code;
  return null;
end
$$;
create trigger links_drop_visit_stats after update of deleted_at on links
  for each row when (old.deleted_at is null and new.deleted_at is not null)
  execute function drop_visit_stats();
