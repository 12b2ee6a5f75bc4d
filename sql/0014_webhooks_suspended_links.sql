-- A link suspended by reports (0012) is stopped as a disabled one is: its owner hears
-- link.disabled when it stops for either reason, and link.enabled when an operator lets it go
-- again (report resolve, link enable); event data says "disabled" for both.
create or replace function link_event_data(l links) returns jsonb
language sql stable as $$
  select jsonb_build_object('code', l.code, 'url', l.url, 'created_at', l.created_at, 'updated_at', l.updated_at,
                            'expires_at', l.expires_at, 'disabled', l.disabled_at is not null or l.suspended_at is not null)
$$;

create or replace function link_webhook_events() returns trigger
language plpgsql as $$
declare
  was_stopped boolean := tg_op = 'UPDATE' and (old.disabled_at is not null or old.suspended_at is not null);
  is_stopped boolean := new.disabled_at is not null or new.suspended_at is not null;
begin
  if tg_op = 'INSERT' then
    if new.deleted_at is null then
      perform queue_webhook_event(new.user_id, 'link.created', link_event_data(new));
    end if;
  elsif old.deleted_at is null and new.deleted_at is not null then
    perform queue_webhook_event(old.user_id, 'link.deleted',
      jsonb_build_object('code', old.code, 'url', old.url, 'deleted_at', new.deleted_at));
  elsif new.deleted_at is null then
    if not was_stopped and is_stopped then
      perform queue_webhook_event(new.user_id, 'link.disabled', link_event_data(new) || jsonb_build_object(
        'reason', case when new.disabled_at is not null then new.disabled_reason else 'suspended: reported by visitors' end));
    elsif was_stopped and not is_stopped then
      perform queue_webhook_event(new.user_id, 'link.enabled', link_event_data(new));
    end if;
    if old.url is distinct from new.url or old.expires_at is distinct from new.expires_at then
      perform queue_webhook_event(new.user_id, 'link.updated', link_event_data(new));
    end if;
  end if;
  return null;
end
$$;

drop trigger links_webhook_update on links;
create trigger links_webhook_update after update on links
  for each row when (old.url is distinct from new.url or old.expires_at is distinct from new.expires_at
                     or old.disabled_at is distinct from new.disabled_at or old.suspended_at is distinct from new.suspended_at
                     or old.deleted_at is distinct from new.deleted_at)
  execute function link_webhook_events();
