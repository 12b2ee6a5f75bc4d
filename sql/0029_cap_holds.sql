-- Visit caps by blocks (src/links/caps.ts): a node busy on a capped link takes several of its
-- visits from link_caps at once and answers them from memory, giving back what it did not use.
-- A visit is taken from visits_left before any node answers it, so the cap is never exceeded;
-- link_cap_holds says which node holds how many (at most: the node does not report each use), so
-- that a node that finds visits_left at 0 asks the holders for theirs (NOTIFY on p_channel) and
-- waits for them rather than answering 410 while visits are still unused. A hold lasts until
-- `until` (the node renews it with each block); a node that died leaves it to expire, and the
-- visits it held count as used: the cap may end up to one block short, never over.
create table link_cap_holds (
  code  text not null collate "C" references link_caps (code) on delete cascade,
  node  text not null,
  held  bigint not null check (held > 0),
  until timestamptz not null,
  primary key (code, node)
);

-- One statement for a node's batch: for each code (in code order, so two nodes' batches cannot
-- deadlock), first p_back visits are given back (and the node's hold ends), then p_need visits are
-- taken for the requests waiting and up to p_want - p_need more kept as the node's hold. A block
-- beyond the requests waiting is at most a quarter of what is left, so the visits held by nodes
-- shrink as the cap nears its end. Returns, per code: visits_left before the take (null: the link
-- has no cap), how many were taken, and how many other nodes hold (their unexpired holds); when
-- fewer were taken than needed and others hold some, they are asked for them on p_channel.
create function take_cap_visits(p_node text, p_codes text[], p_back int[], p_need int[], p_want int[], p_lease_ms int, p_channel text)
returns table (r_code text, r_left float8, r_taken int, r_others float8)
language plpgsql as $$
declare
  w record;
  v bigint;
  g bigint;
begin
  for w in
    select x.code, x.back, x.need, greatest(x.want, x.need) as want
    from unnest(p_codes, p_back, p_need, p_want) as x(code, back, need, want)
    order by x.code collate "C"
  loop
    r_code := w.code;
    select c.visits_left into v from link_caps c where c.code = w.code for update;
    if not found then
      r_left := null; r_taken := 0; r_others := 0;
      return next;
      continue;
    end if;
    if w.back > 0 then
      v := v + w.back;
      update link_caps set visits_left = v where code = w.code;
    end if;
    -- A node sends a code only once its block is used up or given back: its hold ends here. Expired
    -- holds of other nodes are dropped, their visits counted as used.
    delete from link_cap_holds h where h.code = w.code and (h.node = p_node or h.until < now());
    g := least(greatest(v, 0), greatest(w.need, least(w.want, v / 4)));
    if g > 0 then
      update link_caps set visits_left = visits_left - g where code = w.code;
    end if;
    if g > w.need then
      insert into link_cap_holds (code, node, held, until)
      values (w.code, p_node, g - w.need, now() + make_interval(secs => p_lease_ms / 1000.0));
    end if;
    select coalesce(sum(h.held), 0) into r_others from link_cap_holds h where h.code = w.code and h.node <> p_node;
    if g < w.need and r_others > 0 then
      perform pg_notify(p_channel, w.code);
    end if;
    r_left := v;
    r_taken := g;
    return next;
  end loop;
end
$$;
