-- The creation limit counts links actually created. An account's allowance is a token bucket of
-- p_burst creates refilled at p_per_minute (both a tenth, at least 1, while the account is
-- younger than p_young_hours), kept as a level of leaky_buckets that drains at p_per_minute. The
-- checks run in the contract's order: a blocked host, then the 50-link cap (409 comes before any
-- limit), then the allowance; only an insert that succeeds takes a token. A create that fails,
-- hits the cap or loses a code race takes none, and an atomic bulk batch undone takes none. The
-- level is read and raised under the owner's row lock, so the limit is exact across nodes.

-- The level of a bucket now, drained for the time since it was last written; 0 for none. Reads only.
create function leaky_bucket_level(p_key text, p_drain_per_second double precision) returns double precision
language sql as $$
  select coalesce((select greatest(0, b.level - greatest(0, extract(epoch from clock_timestamp() - b.updated_at)) * p_drain_per_second)
                   from leaky_buckets b where b.key = p_key), 0)
$$;

-- Raises a bucket by p_n after draining it, whatever its limit (the caller checked the room).
create function leaky_bucket_take(p_key text, p_n double precision, p_drain_per_second double precision) returns void
language plpgsql as $$
declare
  l double precision := leaky_bucket_level(p_key, p_drain_per_second) + p_n;
  now_ts timestamptz := clock_timestamp();
begin
  insert into leaky_buckets as b (key, level, empty_at, updated_at)
  values (p_key, l, now_ts + make_interval(secs => l / p_drain_per_second), now_ts)
  on conflict (key) do update set level = excluded.level, empty_at = excluded.empty_at, updated_at = excluded.updated_at;
end
$$;

-- The account's allowance: its bucket's size and refill a minute, scaled for a young account.
create function create_allowance(p_user uuid, p_burst int, p_per_minute int, p_young_hours int,
                                 out burst float8, out per_second float8)
language plpgsql stable as $$
declare
  young boolean;
begin
  select p_young_hours > 0 and u.created_at > now() - make_interval(hours => p_young_hours) into young from users u where u.id = p_user;
  burst := case when young then greatest(1, p_burst / 10) else p_burst end;
  per_second := (case when young then greatest(1, p_per_minute / 10) else p_per_minute end) / 60.0;
end
$$;

drop function create_link(uuid, text[], text, text, text, timestamptz, int, text, int, int, timestamptz, bigint, text, text[], text, text, text, jsonb, text[]);
create function create_link(p_user uuid, p_codes text[], p_url text, p_location text, p_host text, p_expires_at timestamptz,
                            p_max int, p_channel text, p_burst int, p_per_minute int, p_young_hours int,
                            p_starts_at timestamptz, p_max_visits bigint, p_password_hash text, p_tags text[],
                            p_title text, p_description text, p_image_url text, p_rules jsonb, p_rule_hosts text[])
returns table (r_outcome text, r_code text, r_url text, r_created_at timestamptz, r_updated_at timestamptz,
               r_visits float8, r_last_visited_at timestamptz, r_expires_at timestamptz, r_retry_after int)
language plpgsql as $$
declare
  c text;
  n int;
  a record;
  lvl float8;
  bucket text := 'creates account ' || p_user::text;
begin
  perform 1 from users where id = p_user for update;
  if not found then
    r_outcome := 'no-user';
    return next;
    return;
  end if;
  if host_blocked(p_host) or exists (select 1 from unnest(p_rule_hosts) h where host_blocked(h)) then
    r_outcome := 'blocked';
    return next;
    return;
  end if;
  select count(*) into n from links l where l.user_id = p_user and l.deleted_at is null;
  if n >= p_max then
    r_outcome := 'limit';
    return next;
    return;
  end if;
  select * into a from create_allowance(p_user, p_burst, p_per_minute, p_young_hours);
  lvl := leaky_bucket_level(bucket, a.per_second);
  if lvl + 1 > a.burst then
    r_outcome := 'rate-limited';
    r_retry_after := greatest(1, ceil((lvl + 1 - a.burst) / a.per_second))::int;
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
      perform leaky_bucket_take(bucket, 1, a.per_second);
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

-- Bulk: each item in order is refused for a blocked host, then for the cap, then when the
-- allowance has no token left for it ('rate-limited', with the seconds until one fits); the rest
-- are created. Tokens are taken for the created items once the batch stands.
drop function create_links(uuid, text[], text[], text[], timestamptz[], text[], int, int, boolean, text, int, int);
create function create_links(p_user uuid, p_urls text[], p_locations text[], p_hosts text[], p_expires timestamptz[],
                             p_codes text[], p_tries int, p_max int, p_atomic boolean, p_channel text,
                             p_burst int, p_per_minute int, p_young_hours int)
returns table (r_outcome text, r_code text, r_created_at timestamptz, r_updated_at timestamptz, r_retry_after int)
language plpgsql as $$
declare
  n int;
  c text;
  o text;
  a record;
  lvl float8;
  used int := 0;
  made int := 0;
  bucket text := 'creates account ' || p_user::text;
  items int := coalesce(array_length(p_urls, 1), 0);
  waits int[] := '{}';
  outcomes text[] := '{}';
  codes text[] := '{}';
  created timestamptz[] := '{}';
  updated timestamptz[] := '{}';
  rc text;
  rcr timestamptz;
  rup timestamptz;
  w int;
begin
  perform 1 from users where id = p_user for update;
  if not found then
    return query select 'no-user', null::text, null::timestamptz, null::timestamptz, null::int;
    return;
  end if;
  select * into a from create_allowance(p_user, p_burst, p_per_minute, p_young_hours);
  lvl := leaky_bucket_level(bucket, a.per_second);
  select count(*) into n from links l where l.user_id = p_user and l.deleted_at is null;
  begin
    for i in 1 .. items loop
      o := 'taken';
      rc := null;
      rcr := null;
      rup := null;
      w := null;
      if host_blocked(p_hosts[i]) then
        o := 'blocked';
      elsif n >= p_max then
        o := 'limit';
      elsif lvl + used + 1 > a.burst then
        o := 'rate-limited';
        w := greatest(1, ceil((lvl + used + 1 - a.burst) / a.per_second))::int;
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
            used := used + 1;
            exit;
          end if;
        end loop;
      end if;
      outcomes := outcomes || o;
      codes := codes || rc;
      created := created || rcr;
      updated := updated || rup;
      waits := waits || w;
    end loop;
    if p_atomic and exists (select 1 from unnest(outcomes) x where x <> 'created') then
      raise exception 'atomic batch undone';
    end if;
    made := used;
  exception when raise_exception then
    -- the block's inserts, notices and queued events are undone; the variables keep their values
    for i in 1 .. array_length(outcomes, 1) loop
      if outcomes[i] = 'created' then
        outcomes[i] := 'aborted';
      end if;
    end loop;
  end;
  if made > 0 then
    perform leaky_bucket_take(bucket, made, a.per_second);
  end if;
  return query select x.o, x.c, x.cr, x.up, x.w
    from unnest(outcomes, codes, created, updated, waits) with ordinality as x(o, c, cr, up, w, i) order by x.i;
end
$$;
