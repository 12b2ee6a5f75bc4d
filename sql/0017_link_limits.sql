-- Password links, start and visit limits, preview cards, tags and redirect rules.
-- password_hash: argon2id (PHC string) of the link's password, from the service's KDF pool;
-- never returned, cleared when the link is deleted.
-- Start and visit limits: before starts_at a link answers 404 as if unknown; with
-- max_visits it answers 410 LINK_EXHAUSTED once that many visits were served.
alter table links
  add column starts_at timestamptz,
  add column max_visits bigint check (max_visits > 0),
  add column password_hash text,
  -- up to 10, 1-32 characters each, kept as given and compared case-insensitively (lower())
  add column tags text[] not null default '{}',
  -- the preview card shown to link-preview fetchers (src/links/preview-fetchers.ts); never fetched from the target
  add column title text,
  add column description text,
  add column image_url text,
  -- redirect rules: up to 10 ordered {"if": {device?, language?, country?}, "url"}; the first whose
  -- conditions all match gives the target, else the link's url. Null: none. Checked by
  -- src/links/rules.ts before they are written; evaluated in memory by the redirect.
  add column rules jsonb,
  -- every suffix of each rule target's host, as host_domains holds the url's: a link any of whose
  -- targets is on the block list is stopped, whenever the host was listed. Null: no rules.
  add column rule_domains text[];

-- A link's rule_domains from its rule targets' hosts (as the API canonicalizes them), in order.
create function rule_domains_of(p_hosts text[]) returns text[]
language sql immutable as $$
  select case when cardinality(p_hosts) > 0 then
    array(select d from unnest(p_hosts) with ordinality as h(host, i), unnest(domains_of(h.host)) with ordinality as x(d, j) order by i, j)
  end
$$;

-- The cap's own count, taken one visit at a time in the database before each 302
-- (src/links/caps.ts): exact across nodes, and written only for capped links (links.visits is
-- batched and lags). A row per capped link, apart from links: the visit flush holds its links
-- rows locked for its whole transaction, and a take must not wait for it. A take never goes
-- below 0; a cap lowered below the visits made leaves it below 0 (as many as were over), and 0 or
-- less is used up.
create table link_caps (
  code        text primary key collate "C" references links (code),
  visits_left bigint not null
);

-- The view lists the columns links had when it was made: made again, it has the new ones.
drop view live_links;
create view live_links as
select s.*, s.disabled_at is not null or s.suspended_at is not null or s.host_blocked as stopped
from (
  select l.*, exists (select 1 from blocked_hosts b where b.host = any(l.host_domains || l.rule_domains)) as host_blocked
  from links l
  where l.deleted_at is null
) s;

-- create_link of 0012, taking the start, the cap (its count starts full), the password hash, the
-- tags, the card and the rules too; a rule target's host on the block list is refused as the
-- link's url is ('blocked').
drop function create_link(uuid, text[], text, text, text, timestamptz, int, text, int, int);
create function create_link(p_user uuid, p_codes text[], p_url text, p_location text, p_host text, p_expires_at timestamptz,
                            p_max int, p_channel text, p_per_minute int, p_young_hours int,
                            p_starts_at timestamptz, p_max_visits bigint, p_password_hash text, p_tags text[],
                            p_title text, p_description text, p_image_url text, p_rules jsonb, p_rule_hosts text[])
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
  if host_blocked(p_host) or exists (select 1 from unnest(p_rule_hosts) h where host_blocked(h)) then
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
    insert into links as l (code, user_id, url, location, host_domains, expires_at, starts_at, max_visits, password_hash, tags, title, description, image_url, rules, rule_domains)
    values (c, p_user, p_url, p_location, domains_of(p_host), p_expires_at, p_starts_at, p_max_visits, p_password_hash, p_tags, p_title, p_description, p_image_url, p_rules,
            rule_domains_of(p_rule_hosts))
    on conflict (code) do nothing
    returning l.code, l.url, l.created_at, l.updated_at, l.visits::float8, l.last_visited_at, l.expires_at
    into r_code, r_url, r_created_at, r_updated_at, r_visits, r_last_visited_at, r_expires_at;
    if found then
      if p_max_visits is not null then
        insert into link_caps (code, visits_left) values (c, p_max_visits);
      end if;
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

-- tombstone_links of 0008: a tombstone keeps no password hash, card, rules or cap either.
create or replace function tombstone_links(p_user uuid, p_code text, p_channel text) returns setof text
language plpgsql as $$
declare
  c text;
begin
  for c in
    update links set user_id = null, url = null, location = null, host_domains = null, password_hash = null,
                     title = null, description = null, image_url = null, rules = null, rule_domains = null, deleted_at = now()
    where user_id = p_user and deleted_at is null and (p_code is null or code = p_code)
    returning code
  loop
    delete from link_caps where code = c;
    perform pg_notify(p_channel, c);
    return next c;
  end loop;
end;
$$;

-- Webhooks (0013, 0014): link events carry the new fields as the API shows them, and link.updated
-- follows a change of any field an owner sets (the password only as set or removed: its hash is
-- never sent).
create or replace function link_event_data(l links) returns jsonb
language sql stable as $$
  select jsonb_build_object('code', l.code, 'url', l.url, 'created_at', l.created_at, 'updated_at', l.updated_at,
                            'expires_at', l.expires_at, 'disabled', l.disabled_at is not null or l.suspended_at is not null,
                            'starts_at', l.starts_at, 'max_visits', l.max_visits, 'password_protected', l.password_hash is not null,
                            'tags', to_jsonb(l.tags), 'title', l.title, 'description', l.description, 'image_url', l.image_url,
                            'rules', coalesce(l.rules, '[]'::jsonb))
$$;

create function link_owner_fields_changed(o links, n links) returns boolean
language sql immutable as $$
  select o.url is distinct from n.url or o.expires_at is distinct from n.expires_at
      or o.starts_at is distinct from n.starts_at or o.max_visits is distinct from n.max_visits
      or o.password_hash is distinct from n.password_hash or o.tags is distinct from n.tags
      or o.title is distinct from n.title or o.description is distinct from n.description
      or o.image_url is distinct from n.image_url or o.rules is distinct from n.rules
$$;

create or replace function link_webhook_events() returns trigger
language plpgsql as $$
declare
  was_stopped boolean := tg_op = 'UPDATE' and (old.disabled_at is not null or old.suspended_at is not null);
  is_stopped boolean := new.disabled_at is not null or new.suspended_at is not null;
begin
  if tg_op = 'INSERT' then
    if new.deleted_at is null then
      perform queue_webhook_event(new.user_id, 'link.created', link_event_data(new));
    end if;
  elsif old.deleted_at is null and new.deleted_at is not null then
    perform queue_webhook_event(old.user_id, 'link.deleted',
      jsonb_build_object('code', old.code, 'url', old.url, 'deleted_at', new.deleted_at));
  elsif new.deleted_at is null then
    if not was_stopped and is_stopped then
      perform queue_webhook_event(new.user_id, 'link.disabled', link_event_data(new) || jsonb_build_object(
        'reason', case when new.disabled_at is not null then new.disabled_reason else 'suspended: reported by visitors' end));
    elsif was_stopped and not is_stopped then
      perform queue_webhook_event(new.user_id, 'link.enabled', link_event_data(new));
    end if;
    if link_owner_fields_changed(old, new) then
      perform queue_webhook_event(new.user_id, 'link.updated', link_event_data(new));
    end if;
  end if;
  return null;
end
$$;

drop trigger links_webhook_update on links;
create trigger links_webhook_update after update on links
  for each row when (link_owner_fields_changed(old, new)
                     or old.disabled_at is distinct from new.disabled_at or old.suspended_at is distinct from new.suspended_at
                     or old.deleted_at is distinct from new.deleted_at)
  execute function link_webhook_events();
