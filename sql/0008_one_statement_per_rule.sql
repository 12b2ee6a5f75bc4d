-- Rules that several readers and writers share, each written once.

-- A live link, and whether it is stopped: an operator disabled it, or its host (or a parent
-- domain of it) is on the block list. The block list is read once per statement. A redirect is
-- also stopped when the link's owner is disabled (src/links/queries.ts, findLocations).
create view live_links as
select s.*, s.disabled_at is not null or s.host_blocked as stopped
from (
  select l.*, l.host_domains && array(select host from blocked_hosts) as host_blocked
  from links l
  where l.deleted_at is null
) s;

-- Deleting links leaves tombstones: the code answers 404 from then on and is never assigned
-- again. `p_user`'s live link `p_code`, or all of them when `p_code` is null; every node is told
-- on `p_channel` (sent at commit) to forget each code. Returns the codes.
create function tombstone_links(p_user uuid, p_code text, p_channel text) returns setof text
language plpgsql as $$
declare
  c text;
begin
  for c in
    update links set user_id = null, url = null, location = null, host_domains = null, deleted_at = now()
    where user_id = p_user and deleted_at is null and (p_code is null or code = p_code)
    returning code
  loop
    perform pg_notify(p_channel, c);
    return next c;
  end loop;
end;
$$;
