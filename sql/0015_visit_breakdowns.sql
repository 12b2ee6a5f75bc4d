-- Human visits per link, UTC day and breakdown: device (mobile, tablet, desktop, other), browser
-- family, OS family and country (ISO 3166-1 alpha-2, or "unknown"), worked out at the visit flush
-- from the User-Agent and the client address. Neither is stored, nor any hash of them.
create table visit_dims (
  code   text not null collate "C",
  day    date not null,
  dim    text not null collate "C" check (dim in ('device', 'browser', 'os', 'country')),
  value  text not null collate "C",
  visits bigint not null,
  primary key (code, day, dim, value)
);
create index visit_dims_day on visit_dims (day);

-- A deleted link takes its breakdowns with it, as drop_visit_stats does its other statistics.
create function drop_visit_dims() returns trigger language plpgsql as $$
begin
  delete from visit_dims where code = new.code;
  return null;
end
$$;
create trigger links_drop_visit_dims after update of deleted_at on links
  for each row when (old.deleted_at is null and new.deleted_at is not null)
  execute function drop_visit_dims();
