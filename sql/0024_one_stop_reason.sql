-- Why a link is stopped, decided once. Before, "disabled" meant three things: in the API a link
-- disabled, suspended or with a blocked host; in webhook link events disabled or suspended; in
-- link.expired only disabled_at; the redirect added a disabled owner. Now link_stop_reason says
-- it for every reader: 'blocked' (its host, a domain above it, or a rule's host is on the block
-- list), 'disabled' (an operator disabled the link or its owner), 'suspended' (open reports from
-- enough addresses), or null. The view live_links carries it (and `stopped`), and every link
-- event's payload says `disabled` from it.

create function link_stop_reason(l links) returns text language sql stable as $$
  select case
    when exists (select 1 from blocked_hosts b where b.host = any(l.host_domains || l.rule_domains)) then 'blocked'
    when l.disabled_at is not null or exists (select 1 from users u where u.id = l.user_id and u.disabled_at is not null) then 'disabled'
    when l.suspended_at is not null then 'suspended'
  end
$$;

drop view live_links;
create view live_links as
select s.*, s.stop_reason is not null as stopped, coalesce(s.stop_reason = 'blocked', false) as host_blocked
from (
  select l.*, link_stop_reason(l) as stop_reason
  from links l
  where l.deleted_at is null
) s;

-- link_event_data of sql/0017, with `disabled` as the API says it.
create or replace function link_event_data(l links) returns jsonb
language sql stable as $$
  select jsonb_build_object('code', l.code, 'url', l.url, 'created_at', l.created_at, 'updated_at', l.updated_at,
                            'expires_at', l.expires_at, 'disabled', link_stop_reason(l) is not null,
                            'starts_at', l.starts_at, 'max_visits', l.max_visits, 'password_protected', l.password_hash is not null,
                            'tags', to_jsonb(l.tags), 'title', l.title, 'description', l.description, 'image_url', l.image_url,
                            'rules', coalesce(l.rules, '[]'::jsonb))
$$;
