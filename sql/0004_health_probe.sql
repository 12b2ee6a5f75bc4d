-- /healthz proves that the database takes writes by writing this one row, when no other write
-- has told it lately (src/health.ts).
create table health_probe (
  id int primary key check (id = 1),
  at timestamptz not null
);
