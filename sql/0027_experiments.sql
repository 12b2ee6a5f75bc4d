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

-- A link's experiment for its statistics, in the statement that reads them (link_stats): its
-- variants, the link's url (the one arm of conversions alone) and every row since its start,
-- each saying whether it is in the range [p_from, p_to]. Null without an experiment.
create function experiment_results(p_code text, p_from date, p_to date) returns jsonb
language sql stable as $$
  select jsonb_build_object('variants', e.variants, 'url', l.url, 'rows',
    coalesce((select jsonb_agg(jsonb_build_array(d.day, d.variant, d.visits, d.conversions, encode(d.sketch, 'hex'), d.day between p_from and p_to)
                               order by d.day, d.variant)
              from experiment_days d where d.code = e.code and d.day >= e.started_on), '[]'::jsonb))
  from link_experiments e join links l on l.code = e.code
  where e.code = p_code
$$;
