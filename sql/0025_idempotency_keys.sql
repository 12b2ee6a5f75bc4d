-- Idempotency-Key on creates (src/idempotency.ts): a key's first result, written in the same
-- transaction as what the request created, answered again for 24 hours to a request with the same
-- key and the same method, path and body (fingerprint: SHA-256, passwords left out). scope is
-- 'u:' and the account's id, or 'anon' for a registration. status is null only inside the
-- transaction that claims the key: a committed row always holds its result.
create table idempotency_keys (
  scope       text not null,
  key         text not null,
  fingerprint bytea not null,
  status      smallint,
  headers     jsonb,
  body        text,
  created_at  timestamptz not null default now(),
  primary key (scope, key)
);
-- The sweep deletes rows past the 24 hours.
create index idempotency_keys_created_at on idempotency_keys (created_at);
