-- Redirect rules (issue 25): up to 10 ordered rules, each {"if": {device?, language?, country?},
-- "url"}; the first whose conditions all match gives the target, else the link's url. Null: none.
-- Checked by src/links/rules.ts before they are written; evaluated in memory by the redirect.
alter table links add column rules jsonb;

-- The view lists the columns links had when it was made: made again, it has the new one.
drop view live_links;
create view live_links as
select s.*, s.disabled_at is not null or s.suspended_at is not null or s.host_blocked as stopped
from (
  select l.*, exists (select 1 from blocked_hosts b where b.host = any(l.host_domains)) as host_blocked
  from links l
  where l.deleted_at is null
) s;

-- create_link of 0017, taking the rules and their targets' hosts too: a rule target on the
-- block list is refused as the link's url is ('blocked').
drop function create_link(uuid, text[], text, text, text, timestamptz, int, text, int, int, timestamptz, bigint, text, text[], text, text, text);
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

-- tombstone_links of 0017: a tombstone keeps no rules either.
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
