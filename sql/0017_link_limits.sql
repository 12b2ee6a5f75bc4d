-- Password links, start and visit limits, preview cards, tags and redirect rules (issue 25).
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
  add column rules jsonb;

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
  select l.*, exists (select 1 from blocked_hosts b where b.host = any(l.host_domains)) as host_blocked
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
    insert into links as l (code, user_id, url, location, host_domains, expires_at, starts_at, max_visits, password_hash, tags, title, description, image_url, rules)
    values (c, p_user, p_url, p_location, domains_of(p_host), p_expires_at, p_starts_at, p_max_visits, p_password_hash, p_tags, p_title, p_description, p_image_url, p_rules)
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
                     title = null, description = null, image_url = null, rules = null, deleted_at = now()
    where user_id = p_user and deleted_at is null and (p_code is null or code = p_code)
    returning code
  loop
    delete from link_caps where code = c;
    perform pg_notify(p_channel, c);
    return next c;
  end loop;
end;
$$;
