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
