-- What the transparency report counts (src/transparency/). An operator's stops are recorded as
-- they happen, as counts with a time and nothing else: a link enabled again, an account enabled
-- again or a host unblocked clears the column that said so, and the report must not shrink.
-- Kinds: 'link_disabled' (an operator disabled a link), 'link_blocked_manual' (a host an operator
-- blocked, by hand or through a report, stopped these links), 'link_blocked_feed' (a threat feed's
-- new entries did), 'account_disabled'.

create table trust_events (
  at   timestamptz not null default now(),
  kind text not null check (kind in ('link_disabled', 'link_blocked_manual', 'link_blocked_feed', 'account_disabled')),
  n    int not null check (n > 0)
);
create index trust_events_at on trust_events (at);

create function record_link_disabled() returns trigger language plpgsql as $$
begin
  insert into trust_events (kind, n) values ('link_disabled', 1);
  return null;
end
$$;
create trigger links_disabled_counted after update of disabled_at on links
  for each row when (old.disabled_at is null and new.disabled_at is not null)
  execute function record_link_disabled();

create function record_account_disabled() returns trigger language plpgsql as $$
begin
  insert into trust_events (kind, n) values ('account_disabled', 1);
  return null;
end
$$;
create trigger users_disabled_counted after update of disabled_at on users
  for each row when (old.disabled_at is null and new.disabled_at is not null)
  execute function record_account_disabled();

-- The live links that new block-list entries stop and that no entry stopped before: one count per
-- statement (a feed's load inserts its new hosts in one), split into the operator's and the feeds'.
create function record_links_blocked() returns trigger language plpgsql as $$
declare
  manual int;
  feed int;
begin
  if not exists (select 1 from new_entries) then
    return null;
  end if;
  select count(*) filter (where s.by_manual), count(*) filter (where not s.by_manual) into manual, feed
  from (
    select l.code, bool_or(n.source = 'manual') as by_manual
    from links l, unnest(l.host_domains || coalesce(l.rule_domains, '{}')) d, new_entries n
    where l.deleted_at is null and n.host = d
      and not exists (select 1 from blocked_hosts b
                      where b.host = any(l.host_domains || coalesce(l.rule_domains, '{}'))
                        and not exists (select 1 from new_entries x where x.host = b.host and x.source = b.source))
    group by l.code
  ) s;
  if manual > 0 then insert into trust_events (kind, n) values ('link_blocked_manual', manual); end if;
  if feed > 0 then insert into trust_events (kind, n) values ('link_blocked_feed', feed); end if;
  return null;
end
$$;
create trigger blocked_hosts_counted after insert on blocked_hosts
  referencing new table as new_entries
  for each statement execute function record_links_blocked();

-- When the operator's own entries (source 'manual') last changed, an unblock included: the
-- Last-Modified of /blocklist.txt. One row.
create table manual_blocks_changed (
  one        boolean primary key default true check (one),
  changed_at timestamptz not null
);
insert into manual_blocks_changed (changed_at) select coalesce(max(created_at), now()) from blocked_hosts where source = 'manual';

create function touch_manual_blocks() returns trigger language plpgsql as $$
begin
  update manual_blocks_changed set changed_at = now();
  return null;
end
$$;
create trigger manual_blocks_added after insert on blocked_hosts
  for each row when (new.source = 'manual') execute function touch_manual_blocks();
create trigger manual_blocks_removed after delete on blocked_hosts
  for each row when (old.source = 'manual') execute function touch_manual_blocks();

-- What was already stopped before this migration, by the time its column says.
insert into trust_events (at, kind, n)
select disabled_at, 'link_disabled', 1 from links where disabled_at is not null and deleted_at is null;
insert into trust_events (at, kind, n)
select disabled_at, 'account_disabled', 1 from users where disabled_at is not null;
insert into trust_events (at, kind, n)
select min(b.created_at), case when bool_or(b.source = 'manual') then 'link_blocked_manual' else 'link_blocked_feed' end, 1
from links l, unnest(l.host_domains || coalesce(l.rule_domains, '{}')) d, blocked_hosts b
where l.deleted_at is null and b.host = d
group by l.code;
