-- Visit flushes that count once: each flush's id is recorded in the flush's own transaction, so a
-- flush retried after a failure that may have come after its COMMIT (the connection cut while
-- the commit's answer was on its way) finds its id and adds nothing again. The daily job deletes
-- ids older than two days; a retry comes at the next flush, seconds later.
create table visit_flushes (
  id uuid primary key,
  at timestamptz not null default now()
);
create index visit_flushes_at on visit_flushes (at);
