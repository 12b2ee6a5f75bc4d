-- Bulk create counts the creation limit per item, as create_link (0012) counts a single create:
-- each item takes one create from the account's allowance (LINK_CREATE_PER_MINUTE, a tenth while
-- the account is younger than p_young_hours). An item the allowance refuses answers
-- 'rate-limited' with the seconds until one fits (r_retry_after), before any other check; the
-- items before it are created, as they would have been one request at a time. The takes are made
-- before the atomic block, so an atomic batch undone still counts its items (as refused single
-- creates count theirs): undoing a batch never refills the allowance.
drop function create_links(uuid, text[], text[], text[], timestamptz[], text[], int, int, boolean, text);
create function create_links(p_user uuid, p_urls text[], p_locations text[], p_hosts text[], p_expires timestamptz[],
                             p_codes text[], p_tries int, p_max int, p_atomic boolean, p_channel text,
                             p_per_minute int, p_young_hours int)
returns table (r_outcome text, r_code text, r_created_at timestamptz, r_updated_at timestamptz, r_retry_after int)
language plpgsql as $$
declare
  n int;
  c text;
  o text;
  lim float8;
  ok boolean;
  lvl float8;
  items int := coalesce(array_length(p_urls, 1), 0);
  waits int[] := '{}';
  outcomes text[] := '{}';
  codes text[] := '{}';
  created timestamptz[] := '{}';
  updated timestamptz[] := '{}';
  rc text;
  rcr timestamptz;
  rup timestamptz;
begin
  select case when p_young_hours > 0 and u.created_at > now() - make_interval(hours => p_young_hours)
              then greatest(1, p_per_minute / 10) else p_per_minute end
  into lim from users u where u.id = p_user;
  if not found then
    return query select 'no-user', null::text, null::timestamptz, null::timestamptz, null::int;
    return;
  end if;
  -- One take per item, in order; once one is refused the rest are too (the level only rises
  -- within this statement), so the bucket is not touched again.
  for i in 1 .. items loop
    if i > 1 and waits[i - 1] is not null then
      waits := waits || waits[i - 1];
    else
      select b.added, b.level into ok, lvl from leaky_bucket_add('creates account ' || p_user::text, lim, lim / 60.0) b;
      waits := waits || (case when ok then null else greatest(1, ceil((lvl + 1 - lim) / (lim / 60.0)))::int end);
    end if;
  end loop;
  -- The owner's row lock after the bucket's, in create_link's order: the two never deadlock.
  perform 1 from users where id = p_user for update;
  if not found then
    return query select 'no-user', null::text, null::timestamptz, null::timestamptz, null::int;
    return;
  end if;
  select count(*) into n from links l where l.user_id = p_user and l.deleted_at is null;
  begin
    for i in 1 .. items loop
      o := 'taken';
      rc := null;
      rcr := null;
      rup := null;
      if waits[i] is not null then
        o := 'rate-limited';
      elsif host_blocked(p_hosts[i]) then
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
  return query select x.o, x.c, x.cr, x.up, x.w
    from unnest(outcomes, codes, created, updated, waits) with ordinality as x(o, c, cr, up, w, i) order by x.i;
end
$$;
