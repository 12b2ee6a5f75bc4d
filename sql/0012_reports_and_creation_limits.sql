-- Abuse reports: anyone may report a link (POST /api/v1/reports); operators work the queue with
-- `link-service report`. A reporter is kept only as a digest of its client address: enough to
-- count one report per link and address, and distinct addresses for REPORTS_SUSPEND_AFTER.

create table reports (
  id          bigint generated always as identity primary key,
  code        text not null collate "C" references links (code),
  reason      text not null check (reason in ('phishing', 'malware', 'spam', 'other')),
  details     text,
  -- SHA-256 of the client address (an IPv6 one by /64), base64url
  reporter    text not null,
  created_at  timestamptz not null default now(),
  resolved_at timestamptz,
  -- disable-link, disable-user, block-host or dismiss
  resolution  text,
  note        text
);
-- One open report per link and address; a repeat is accepted and not stored.
create unique index reports_open_once on reports (code, reporter) where resolved_at is null;
create index reports_open_queue on reports (id) where resolved_at is null;

-- Set when open reports from REPORTS_SUSPEND_AFTER distinct addresses stopped the link (410)
-- until an operator resolves them.
alter table links add column suspended_at timestamptz;

-- A suspended link is stopped like a disabled one. (The view lists the columns links had when it
-- was made: made again, it has suspended_at too.)
drop view live_links;
create view live_links as
select s.*, s.disabled_at is not null or s.suspended_at is not null or s.host_blocked as stopped
from (
  select l.*, exists (select 1 from blocked_hosts b where b.host = any(l.host_domains)) as host_blocked
  from links l
  where l.deleted_at is null
) s;

-- Files a report in one statement: 'no-link' for a code that is not a live link, 'duplicate'
-- for a second open one from the same address, else 'filed'. With p_suspend_after > 0, the link
-- is suspended (and every node told, at commit) once that many distinct addresses report it.
create function file_report(p_code text, p_reason text, p_details text, p_reporter text, p_suspend_after int, p_channel text)
returns table (r_outcome text, r_suspended boolean)
language plpgsql as $$
declare
  n int;
begin
  perform 1 from links where code = p_code and deleted_at is null for update;
  if not found then
    r_outcome := 'no-link';
    r_suspended := false;
    return next;
    return;
  end if;
  insert into reports (code, reason, details, reporter) values (p_code, p_reason, p_details, p_reporter)
  on conflict (code, reporter) where resolved_at is null do nothing;
  r_outcome := case when found then 'filed' else 'duplicate' end;
  r_suspended := false;
  if p_suspend_after > 0 then
    select count(*) into n from reports where code = p_code and resolved_at is null;
    if n >= p_suspend_after then
      update links set suspended_at = now() where code = p_code and suspended_at is null;
      if found then
        r_suspended := true;
        perform pg_notify(p_channel, p_code);
      end if;
    end if;
  end if;
  return next;
end
$$;

-- create_link (0007) also takes one create from the account's allowance (LINK_CREATE_PER_MINUTE,
-- a tenth while the account is younger than p_young_hours), in the same statement: a create stays
-- one round trip. The allowance is a leaky bucket of leaky_buckets (0002): level = creates within
-- the last minute's refill, draining p_limit a minute. Refused: 'rate-limited' with the seconds
-- until one fits (r_retry_after), before any other check but the account's existence.
drop function create_link(uuid, text[], text, text, text, timestamptz, int, text);
create function create_link(p_user uuid, p_codes text[], p_url text, p_location text, p_host text, p_expires_at timestamptz,
                            p_max int, p_channel text, p_per_minute int, p_young_hours int)
returns table (r_outcome text, r_code text, r_url text, r_created_at timestamptz, r_updated_at timestamptz,
               r_visits float8, r_last_visited_at timestamptz, r_expires_at timestamptz, r_retry_after int)
language plpgsql as $$
declare
  c text;
  n int;
  lim float8;
  ok boolean;
  lvl float8;
begin
  select case when p_young_hours > 0 and u.created_at > now() - make_interval(hours => p_young_hours)
              then greatest(1, p_per_minute / 10) else p_per_minute end
  into lim from users u where u.id = p_user;
  if not found then
    r_outcome := 'no-user';
    return next;
    return;
  end if;
  select b.added, b.level into ok, lvl from leaky_bucket_add('creates account ' || p_user::text, lim, lim / 60.0) b;
  if not ok then
    r_outcome := 'rate-limited';
    r_retry_after := greatest(1, ceil((lvl + 1 - lim) / (lim / 60.0)))::int;
    return next;
    return;
  end if;
  if host_blocked(p_host) then
    r_outcome := 'blocked';
    return next;
    return;
  end if;
  perform 1 from users where id = p_user for update;
  if not found then
    r_outcome := 'no-user';
    return next;
    return;
  end if;
  select count(*) into n from links l where l.user_id = p_user and l.deleted_at is null;
  if n >= p_max then
    r_outcome := 'limit';
    return next;
    return;
  end if;
  foreach c in array p_codes loop
    insert into links as l (code, user_id, url, location, host_domains, expires_at)
    values (c, p_user, p_url, p_location, domains_of(p_host), p_expires_at)
    on conflict (code) do nothing
    returning l.code, l.url, l.created_at, l.updated_at, l.visits::float8, l.last_visited_at, l.expires_at
    into r_code, r_url, r_created_at, r_updated_at, r_visits, r_last_visited_at, r_expires_at;
    if found then
      perform pg_notify(p_channel, c);
      r_outcome := 'created';
      return next;
      return;
    end if;
  end loop;
  r_outcome := 'taken';
  return next;
end
$$;
