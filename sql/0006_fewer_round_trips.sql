-- Fewer database round trips per request.

-- Every ended session (logout, password change, deletion of the account, an operator's action,
-- expiry sweeps) tells every node, so that a node's cache of checked sessions forgets its user
-- (src/auth/session-cache.ts). The channel is the trigger's argument; the service listens on the
-- same name (SESSION_CHANNEL in src/db/channels.ts). A transaction's identical notices are
-- delivered once.
create function notify_session_ended() returns trigger
language plpgsql as $$
begin
  perform pg_notify(tg_argv[0], old.user_id::text);
  return old;
end
$$;
create trigger sessions_ended after delete on sessions
  for each row execute function notify_session_ended('session_ended');

-- Creating a link in one round trip: the owner's row lock (so the cap holds under any
-- concurrency), the count, the insert of the first free code of p_codes, and the notice to
-- every node, in one call. Each statement of a plpgsql function takes a fresh snapshot, so the
-- count sees every link committed before the lock was granted, as the transaction it replaces did.
create function create_link(p_user uuid, p_codes text[], p_url text, p_location text, p_expires_at timestamptz,
                            p_max int, p_channel text)
returns table (r_outcome text, r_code text, r_url text, r_created_at timestamptz, r_updated_at timestamptz,
               r_visits float8, r_last_visited_at timestamptz, r_expires_at timestamptz)
language plpgsql as $$
declare
  c text;
  n int;
begin
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
    insert into links as l (code, user_id, url, location, expires_at)
    values (c, p_user, p_url, p_location, p_expires_at)
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
