-- Experiments (src/experiments/): a link's weighted variants, whether its redirects carry a click
-- id for conversions, and whether a confident winner replaces its url. One row per link that has
-- any of them; the link's own row is untouched (its url stays the default).
create table link_experiments (
  code            text primary key collate "C" references links (code),
  -- [{"url", "weight"}, ...], 2 to 10 of them, or [] for conversions on the url alone
  variants        jsonb not null default '[]',
  -- the domains of the variants' hosts (rule_domains_of): a blocked one pauses the variants
  variant_domains text[],
  conversions     boolean not null default false,
  promote_winner  boolean not null default false,
  -- the UTC day the variants were last set: results and click ids count from it
  started_on      date not null
);

-- Per link, UTC day and variant: GET redirects sent to it, a sketch of their distinct visitors
-- (src/stats/sketch.ts) and conversions reported for its click ids.
create table experiment_days (
  code        text not null collate "C",
  day         date not null,
  variant     smallint not null,
  visits      bigint not null default 0,
  conversions bigint not null default 0,
  sketch      bytea,
  primary key (code, day, variant)
);

-- Click ids that converted, so that one counts once; kept until it could no longer be valid
-- (CONVERSION_WINDOW_DAYS after its day), then swept.
create table conversions_seen (
  id  text primary key collate "C",
  day date not null
);
create index conversions_seen_day on conversions_seen (day);

-- The key of the variant choice and of click ids' HMAC: made once, by whichever node starts first.
create table experiment_secret (
  one    boolean primary key default true check (one),
  secret bytea not null
);
