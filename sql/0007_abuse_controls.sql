-- Abuse controls: an operator disables accounts and links and blocks target hosts
-- with the admin CLI. A disabled account cannot log in and its links stop redirecting; a
-- disabled link, or one whose host (or a parent domain of it) is blocked, answers 410.

alter table users add column disabled_at timestamptz;

alter table links add column disabled_at timestamptz;
-- the operator's note; shown to operators (link list), not to the owner
alter table links add column disabled_reason text;

-- "a.b.example.com" → {a.b.example.com, b.example.com, example.com, com}: the host and every
-- domain it is under, the names under which the block list may hold it.
create function domains_of(h text) returns text[]
language sql immutable as $$
  select coalesce(array_agg(array_to_string(p[i:], '.') order by i), '{}')
  from (select string_to_array(h, '.') as p) s, generate_subscripts(p, 1) as i
$$;

-- The domains of the url's host, written with the url. The host is the WHATWG URL parser's
-- (lowercase, IDN as punycode, no trailing dot: src/links/hosts.ts), so the block list is
-- matched without parsing urls in SQL, and a redirect's read tests it with one array overlap
-- against the (small) block list, read once per statement.
alter table links add column host_domains text[];
-- Links written before this migration: the authority's host part, lowercased. Exact for ASCII
-- host names and addresses; a host with percent-escapes or non-ASCII characters keeps its
-- spelling until the link's url is next changed (docs/decisions.md).
update links set host_domains = domains_of(rtrim(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(\[[^]]*\]|[^/?#:]*)')), '.'))
where url is not null;

-- Blocked link targets: a host blocks itself and every subdomain.
create table blocked_hosts (
  host       text primary key,
  created_at timestamptz not null default now()
);

-- For one host (a create, a change); queries over many links test host_domains themselves.
create function host_blocked(h text) returns boolean
language sql stable as $$
  select domains_of(h) && array(select host from blocked_hosts)
$$;

-- create_link (0006) also writes the host, and refuses a blocked one ('blocked', before the cap).
drop function create_link(uuid, text[], text, text, timestamptz, int, text);
create function create_link(p_user uuid, p_codes text[], p_url text, p_location text, p_host text, p_expires_at timestamptz,
                            p_max int, p_channel text)
returns table (r_outcome text, r_code text, r_url text, r_created_at timestamptz, r_updated_at timestamptz,
               r_visits float8, r_last_visited_at timestamptz, r_expires_at timestamptz)
language plpgsql as $$
declare
  c text;
  n int;
begin
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
