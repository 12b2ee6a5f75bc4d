-- Threat feeds: block-list entries loaded from files and URLs (BLOCKLIST_SOURCES, `block import`),
-- kept apart from the operator's manual entries by their source, so that a refresh replaces only
-- its own. A feed may hold a million hosts: every check is an indexed look-up of the host and its
-- parent domains, never an array of the whole list.

-- An entry is (host, source); the manual ones keep the source 'manual'. The primary key leads
-- with the host: the look-up of a link's domains uses it.
alter table blocked_hosts add column source text not null default 'manual';
alter table blocked_hosts drop constraint blocked_hosts_pkey;
alter table blocked_hosts add primary key (host, source);

-- One row per feed: where it was read from, what its server said (for conditional requests),
-- and how the last refresh went. A failed refresh keeps the entries of the last good one.
create table blocklist_sources (
  name          text primary key,
  location      text not null,
  etag          text,
  last_modified text,
  -- the last attempt, whatever its outcome; the nodes of a cluster refresh when it is old enough
  checked_at    timestamptz,
  -- the last time the entries were replaced
  loaded_at     timestamptz,
  entries       integer not null default 0,
  invalid_lines integer not null default 0,
  last_error    text,
  failures      integer not null default 0
);

-- Whether any of these domains (a link's host_domains) is on the block list: one index probe per
-- domain, whatever the size of the list.
create function domains_blocked(d text[]) returns boolean
language sql stable as $$
  select exists (select 1 from blocked_hosts where host = any(d))
$$;

-- For one host (a create, a change), as before, now by index.
create or replace function host_blocked(h text) returns boolean
language sql stable as $$
  select domains_blocked(domains_of(h))
$$;

-- The live_links view of 0008 said whether a link's host is blocked with an array of the whole
-- list, built once per statement: now an index probe per domain of the link's host (written out,
-- not as domains_blocked: PostgreSQL inlines no function with a sub-select, and a call per row
-- costs more than the probe).
create or replace view live_links as
select s.*, s.disabled_at is not null or s.host_blocked as stopped
from (
  select l.*, exists (select 1 from blocked_hosts b where b.host = any(l.host_domains)) as host_blocked
  from links l
  where l.deleted_at is null
) s;
