-- Webhooks: an owner's endpoints, and an outbox of deliveries written in the same transaction as
-- the change that causes them (so a crash can neither lose nor invent an event). Any node
-- delivers: it claims due rows with FOR UPDATE SKIP LOCKED and a lease (src/webhooks/).

create table webhooks (
  id              uuid primary key default gen_random_uuid(),
  user_id         uuid not null references users (id) on delete cascade,
  url             text not null,
  events          text[] not null,
  -- "whsec_" + base64 of 32 random bytes: the HMAC key is the base64 part, decoded
  secret          text not null,
  enabled         boolean not null default true,
  -- why the service turned it off (failing for too long); null when the owner did, or it is on
  disabled_reason text,
  -- the first failed attempt since the last success
  failing_since   timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);
create index webhooks_user on webhooks (user_id);

-- One event for one endpoint. Its id is the message's webhook-id, the same on every attempt.
create table webhook_deliveries (
  id              uuid primary key default gen_random_uuid(),
  webhook_id      uuid not null references webhooks (id) on delete cascade,
  event           text not null,
  data            jsonb not null,
  created_at      timestamptz not null default now(),
  -- 'pending' (due at next_attempt_at), 'delivered', or 'failed' (the schedule ran out)
  state           text not null default 'pending',
  attempts        int not null default 0,
  next_attempt_at timestamptz not null default now(),
  -- a node is sending it until then; past it, another node may (the sender died)
  leased_until    timestamptz
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending';
create index webhook_deliveries_of on webhook_deliveries (webhook_id, created_at desc);
create index webhook_deliveries_created on webhook_deliveries (created_at);

create table webhook_attempts (
  id           bigint generated always as identity primary key,
  delivery_id  uuid not null references webhook_deliveries (id) on delete cascade,
  attempted_at timestamptz not null default now(),
  status_code  int,
  error        text,
  duration_ms  int not null
);
create index webhook_attempts_of on webhook_attempts (delivery_id);

-- Every new delivery wakes the delivering nodes at commit (WEBHOOK_CHANNEL in src/db/channels.ts);
-- a transaction's identical notices are delivered once. Nodes also poll, in case one is missed.
create function notify_webhook_pending() returns trigger
language plpgsql as $$
begin
  perform pg_notify(tg_argv[0], '');
  return null;
end
$$;
create trigger webhook_deliveries_new after insert on webhook_deliveries
  for each row execute function notify_webhook_pending('webhook_pending');

-- Queues an event for each of the owner's enabled endpoints subscribed to it: nothing (and one
-- indexed read) when there are none.
create function queue_webhook_event(p_user uuid, p_event text, p_data jsonb) returns void
language sql as $$
  insert into webhook_deliveries (webhook_id, event, data)
  select w.id, p_event, p_data from webhooks w
  where w.user_id = p_user and w.enabled and p_event = any(w.events)
$$;

create function link_event_data(l links) returns jsonb
language sql stable as $$
  select jsonb_build_object('code', l.code, 'url', l.url, 'created_at', l.created_at, 'updated_at', l.updated_at,
                            'expires_at', l.expires_at, 'disabled', l.disabled_at is not null)
$$;

-- The link events, from the one table every path writes (the API, bulk create, the operator's
-- CLI, imports): a change cannot happen without its event. Visit counts and the expiry marker
-- below are not changes an owner is told of (the trigger's WHEN skips them).
create function link_webhook_events() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    if new.deleted_at is null then
      perform queue_webhook_event(new.user_id, 'link.created', link_event_data(new));
    end if;
  elsif old.deleted_at is null and new.deleted_at is not null then
    perform queue_webhook_event(old.user_id, 'link.deleted',
      jsonb_build_object('code', old.code, 'url', old.url, 'deleted_at', new.deleted_at));
  elsif new.deleted_at is null then
    if old.disabled_at is null and new.disabled_at is not null then
      perform queue_webhook_event(new.user_id, 'link.disabled', link_event_data(new) || jsonb_build_object('reason', new.disabled_reason));
    elsif old.disabled_at is not null and new.disabled_at is null then
      perform queue_webhook_event(new.user_id, 'link.enabled', link_event_data(new));
    end if;
    if old.url is distinct from new.url or old.expires_at is distinct from new.expires_at then
      perform queue_webhook_event(new.user_id, 'link.updated', link_event_data(new));
    end if;
  end if;
  return null;
end
$$;
create trigger links_webhook_insert after insert on links
  for each row execute function link_webhook_events();
create trigger links_webhook_update after update on links
  for each row when (old.url is distinct from new.url or old.expires_at is distinct from new.expires_at
                     or old.disabled_at is distinct from new.disabled_at or old.deleted_at is distinct from new.deleted_at)
  execute function link_webhook_events();

-- link.expired is sent once per expiry that passes: the job (src/webhooks/) marks the expiry it
-- announced. A later, new expiry passes and is announced again. Links already expired are marked
-- now, so that no owner hears of old expiries.
alter table links add column expiry_announced timestamptz;
update links set expiry_announced = expires_at where expires_at <= now();
create index links_expiry_due on links (expires_at)
  where expires_at is not null and deleted_at is null and expiry_announced is distinct from expires_at;

-- Bulk create: the items of one request in one call, under the owner's row lock, so the cap
-- holds across the batch and under any concurrency. Item i's candidate codes are
-- p_codes[(i-1)*p_tries + 1 .. i*p_tries], null past the last. Outcomes as create_link's, one per
-- item in order; with p_atomic, one failure undoes every insert (and its notices and events):
-- the items that were created answer 'aborted'.
create function create_links(p_user uuid, p_urls text[], p_locations text[], p_hosts text[], p_expires timestamptz[],
                             p_codes text[], p_tries int, p_max int, p_atomic boolean, p_channel text)
returns table (r_outcome text, r_code text, r_created_at timestamptz, r_updated_at timestamptz)
language plpgsql as $$
declare
  n int;
  c text;
  o text;
  outcomes text[] := '{}';
  codes text[] := '{}';
  created timestamptz[] := '{}';
  updated timestamptz[] := '{}';
  rc text;
  rcr timestamptz;
  rup timestamptz;
begin
  perform 1 from users where id = p_user for update;
  if not found then
    return query select 'no-user', null::text, null::timestamptz, null::timestamptz;
    return;
  end if;
  select count(*) into n from links l where l.user_id = p_user and l.deleted_at is null;
  begin
    for i in 1 .. coalesce(array_length(p_urls, 1), 0) loop
      o := 'taken';
      rc := null;
      rcr := null;
      rup := null;
      if host_blocked(p_hosts[i]) then
        o := 'blocked';
      elsif n >= p_max then
        o := 'limit';
      else
        for j in 1 .. p_tries loop
          c := p_codes[(i - 1) * p_tries + j];
          exit when c is null;
          insert into links as l (code, user_id, url, location, host_domains, expires_at)
          values (c, p_user, p_urls[i], p_locations[i], domains_of(p_hosts[i]), p_expires[i])
          on conflict (code) do nothing
          returning l.code, l.created_at, l.updated_at into rc, rcr, rup;
          if found then
            perform pg_notify(p_channel, c);
            o := 'created';
            n := n + 1;
            exit;
          end if;
        end loop;
      end if;
      outcomes := outcomes || o;
      codes := codes || rc;
      created := created || rcr;
      updated := updated || rup;
    end loop;
    if p_atomic and exists (select 1 from unnest(outcomes) x where x <> 'created') then
      raise exception 'atomic batch undone';
    end if;
  exception when raise_exception then
    -- the block's inserts, notices and queued events are undone; the variables keep their values
    for i in 1 .. array_length(outcomes, 1) loop
      if outcomes[i] = 'created' then
        outcomes[i] := 'aborted';
      end if;
    end loop;
  end;
  return query select x.o, x.c, x.cr, x.up from unnest(outcomes, codes, created, updated) with ordinality as x(o, c, cr, up, i) order by x.i;
end
$$;
