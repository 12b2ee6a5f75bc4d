-- Destination health checks. Every live link's url and rule targets are checked in the
-- background (src/link-checks/): soon after the link is created or its url or rules change, then
-- every LINK_CHECK_INTERVAL_S. One row per link holds what the last decided check found (what the
-- API shows as `health`), the failures in a row not decided yet, when it is due, and which node
-- has claimed it (as webhook_deliveries are claimed: a lease, so a node that dies leaves it to
-- another).
create table link_checks (
  code          text primary key collate "C" references links (code),
  status        text not null default 'unchecked' check (status in ('unchecked', 'ok', 'broken', 'unreachable', 'flagged')),
  checked_at    timestamptz,
  http_status   int,
  final_url     text,
  detail        text,
  -- checks in a row that found the destination broken or unreachable; the second one decides
  failures      int not null default 0,
  next_check_at timestamptz not null default now(),
  claimed_by    text,
  claimed_until timestamptz
);
create index link_checks_due on link_checks (next_check_at);

-- One request at a time per host, cluster-wide (busy_until: a lease on the host for one hop),
-- and a host that answered 429 is left alone until backoff_until.
create table link_check_hosts (
  host          text primary key collate "C",
  busy_until    timestamptz,
  backoff_until timestamptz,
  backoffs      int not null default 0
);

-- LINK_CHECKS_PER_MINUTE for the whole cluster: the time the next check may start. A claim of n
-- checks moves it on by n slots (60 / per-minute seconds each).
create table link_check_pace (
  id      int primary key check (id = 1),
  next_at timestamptz not null default now()
);
insert into link_check_pace (id) values (1);

-- Each time a check stopped a link (it was flagged), for a count per month.
create table link_check_stops (
  id         bigint generated always as identity primary key,
  code       text not null collate "C" references links (code),
  stopped_at timestamptz not null default now(),
  final_url  text,
  detail     text
);
create index link_check_stops_month on link_check_stops (stopped_at);

-- Every link there is, due within the default interval (spread, so a large service does not
-- check everything at once after the upgrade).
insert into link_checks (code, next_check_at)
select code, now() + random() * interval '6 hours' from links where deleted_at is null;

-- A new link, or a new url or rules, is checked at once (every path that writes links: the API,
-- bulk creates, imports).
create function queue_link_check() returns trigger language plpgsql as $$
begin
  insert into link_checks (code, next_check_at) values (new.code, now())
  on conflict (code) do update set next_check_at = now();
  return null;
end
$$;
create trigger links_queue_check_insert after insert on links for each row execute function queue_link_check();
create trigger links_queue_check_update after update of url, rules on links
  for each row when (old.url is distinct from new.url or old.rules is distinct from new.rules)
  execute function queue_link_check();

-- A check found a hop on the block list or a threat feed: the link stops, as for a blocked host.
create or replace function link_stop_reason(l links) returns text language sql stable as $$
  select case
    when exists (select 1 from blocked_hosts b where b.host = any(l.host_domains || l.rule_domains)) then 'blocked'
    when l.disabled_at is not null or exists (select 1 from users u where u.id = l.user_id and u.disabled_at is not null) then 'disabled'
    when l.suspended_at is not null then 'suspended'
    when exists (select 1 from link_checks c where c.code = l.code and c.status = 'flagged') then 'flagged'
  end
$$;

-- A check's own report in the operator's queue.
alter table reports drop constraint reports_reason_check;
alter table reports add constraint reports_reason_check check (reason in ('phishing', 'malware', 'spam', 'other', 'link-check'));

-- Claims up to p_max due checks for p_node, as far as the cluster's pace allows (a burst of at
-- most 5 s of it), each for p_lease seconds. Links stopped by an operator or by reports are not
-- checked (a flagged one is, so that it recovers when its destination does).
create function claim_link_checks(p_node text, p_max int, p_per_minute int, p_lease int)
returns table (r_code text, r_url text, r_rules jsonb)
language plpgsql as $$
declare
  step interval := make_interval(secs => 60.0 / p_per_minute);
  burst int := greatest(1, p_per_minute / 12);
  start timestamptz;
  free int;
  n int;
begin
  select greatest(next_at, now() - step * burst) into start from link_check_pace where id = 1 for update;
  free := least(p_max, floor(extract(epoch from now() - start) / extract(epoch from step))::int);
  if free <= 0 then
    return;
  end if;
  return query
  with due as (
    select c.code from link_checks c join links l on l.code = c.code
    where c.next_check_at <= now() and (c.claimed_until is null or c.claimed_until < now())
      and l.deleted_at is null and l.disabled_at is null and l.suspended_at is null
    order by c.next_check_at
    limit free
    for update of c skip locked
  ), claimed as (
    update link_checks c set claimed_by = p_node, claimed_until = now() + make_interval(secs => p_lease)
    from due where c.code = due.code
    returning c.code
  )
  select l.code::text, l.url, coalesce(l.rules, '[]'::jsonb) from claimed join links l on l.code = claimed.code;
  get diagnostics n = row_count;
  if n > 0 then
    update link_check_pace set next_at = start + step * n where id = 1;
  end if;
end
$$;

-- Takes one check of one link now (an owner asked): false when another node holds it.
create function claim_link_check(p_code text, p_node text, p_lease int) returns boolean
language sql as $$
  with claimed as (
    insert into link_checks (code, claimed_by, claimed_until) values (p_code, p_node, now() + make_interval(secs => p_lease))
    on conflict (code) do update set claimed_by = p_node, claimed_until = excluded.claimed_until
      where link_checks.claimed_until is null or link_checks.claimed_until < now()
    returning 1
  )
  select exists (select 1 from claimed)
$$;

-- Records what a check of p_code by p_node found, in one statement: p_result is 'ok', 'broken',
-- 'unreachable', 'flagged', or 'deferred' (a host asked to wait: due again at p_retry, nothing
-- else changes). A broken or unreachable result is decided at the second in a row (the first
-- is due again after p_retry seconds); flagged at once, which stops the link (every node told
-- on p_channel), records the stop and opens a report. A change of status queues link.unhealthy
-- or link.healthy. Returns the status now and whether it changed.
create function record_link_check(p_code text, p_node text, p_result text, p_http int, p_final text, p_detail text,
                                  p_interval int, p_retry int, p_channel text)
returns table (r_status text, r_changed boolean)
language plpgsql as $$
declare
  c link_checks;
  l links;
  decided boolean;
  was_blocked boolean;
begin
  select * into c from link_checks where code = p_code for update;
  if not found or c.claimed_by is distinct from p_node then
    return; -- the claim ran out and another node took it
  end if;
  select * into l from links where code = p_code;
  if p_result = 'deferred' then
    update link_checks set claimed_by = null, claimed_until = null, next_check_at = now() + make_interval(secs => p_retry) where code = p_code;
    r_status := c.status; r_changed := false; return next; return;
  end if;
  decided := p_result in ('ok', 'flagged') or c.failures >= 1;
  if not decided then
    update link_checks set failures = failures + 1, claimed_by = null, claimed_until = null,
      next_check_at = now() + make_interval(secs => least(p_interval, p_retry)) where code = p_code;
    r_status := c.status; r_changed := false; return next; return;
  end if;
  -- spread: each check is due again within 10% either side of the interval
  update link_checks set status = p_result, checked_at = now(), http_status = p_http, final_url = p_final, detail = p_detail,
    failures = case when p_result in ('broken', 'unreachable') then failures + 1 else 0 end,
    claimed_by = null, claimed_until = null,
    next_check_at = now() + make_interval(secs => p_interval * (0.9 + 0.2 * random()))
  where code = p_code;
  r_status := p_result;
  r_changed := c.status is distinct from p_result;
  if r_changed and l.deleted_at is null then
    if p_result = 'flagged' then
      was_blocked := link_stop_reason(l) = 'blocked';
      insert into link_check_stops (code, final_url, detail) values (p_code, p_final, p_detail);
      if not was_blocked then
        insert into reports (code, reason, details, reporter) values (p_code, 'link-check', p_detail, 'link-check')
        on conflict (code, reporter) where resolved_at is null do nothing;
      end if;
    end if;
    if p_result = 'flagged' or c.status = 'flagged' then
      perform pg_notify(p_channel, p_code);
    end if;
    if p_result <> 'ok' then
      perform queue_webhook_event(l.user_id, 'link.unhealthy', link_event_data(l) || jsonb_build_object('health', link_health(p_code)));
    elsif c.status <> 'unchecked' then
      perform queue_webhook_event(l.user_id, 'link.healthy', link_event_data(l) || jsonb_build_object('health', link_health(p_code)));
    end if;
  end if;
  return next;
end
$$;

-- The `health` of a link as the API shows it.
create function link_health(p_code text) returns jsonb language sql stable as $$
  select coalesce((select jsonb_build_object('status', c.status, 'checked_at', c.checked_at, 'http_status', c.http_status,
                                             'final_url', c.final_url, 'detail', c.detail)
                   from link_checks c where c.code = p_code),
                  jsonb_build_object('status', 'unchecked', 'checked_at', null, 'http_status', null, 'final_url', null, 'detail', null))
$$;
