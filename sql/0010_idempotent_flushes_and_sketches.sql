-- Visit flushes that count once: each flush's id is recorded in the flush's own transaction, so a
-- flush retried after a failure that may have come after its COMMIT (the connection cut while
-- the commit's answer was on its way) finds its id and adds nothing again. The daily job deletes
-- ids older than two days; a retry comes at the next flush, seconds later.
create table visit_flushes (
  id uuid primary key,
  at timestamptz not null default now()
);
create index visit_flushes_at on visit_flushes (at);

-- Unique visitors in bounded space: a HyperLogLog sketch per link and day (src/links/sketch.ts,
-- 1 KiB of registers, standard error 3.25 %) replaces one stored hash per visitor, which any
-- client could grow without bound by varying its User-Agent. `uniques` keeps the exact counts of
-- the days before this migration (their hashes are counted into it here); a day's unique
-- visitors are `uniques` plus the sketch's estimate. On the day of the upgrade, a visitor seen
-- both before and after it counts twice.
alter table visit_days add column sketch bytea;
update visit_days d set uniques = coalesce(d.uniques, 0) + h.n
from (select code, day, count(*) as n from visit_hashes group by code, day) h
where d.code = h.code and d.day = h.day;
drop index visit_days_unreduced;
drop table visit_hashes;

create or replace function drop_visit_stats() returns trigger language plpgsql as $$
begin
  delete from visit_days where code = new.code;
  delete from visit_referrers where code = new.code;
  return null;
end
$$;
