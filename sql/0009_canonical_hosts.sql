-- One canonical host for the block list (src/links/hosts.ts): every trailing dot stripped, and
-- an IPv4 address written as IPv6 (mapped ::ffff:0:0/96, compatible ::/96 but for :: and ::1,
-- NAT64 64:ff9b::/96) stored as that IPv4 address. Links and blocked hosts written before this
-- migration are brought to that form, so that a link to [::ffff:10.0.0.1] or to evil.com.. made
-- earlier is caught by a block of 10.0.0.1 or evil.com. host_domains[1] is the full host (0007).
create function pg_temp.canonical_host(h text) returns text
language plpgsql immutable as $$
declare
  host text := rtrim(h, '.');
  a inet;
begin
  if host !~ '^\[.*\]$' then
    return host;
  end if;
  begin
    a := substr(host, 2, length(host) - 2)::inet;
  exception when others then
    return host; -- not an address PostgreSQL reads: kept as it was
  end;
  if family(a) = 6 and masklen(a) = 128 then
    if a << inet '::ffff:0:0/96' then
      return host(inet '0.0.0.0' + (a - inet '::ffff:0:0'));
    elsif a << inet '64:ff9b::/96' then
      return host(inet '0.0.0.0' + (a - inet '64:ff9b::'));
    elsif a << inet '::/96' and a > inet '::1' then
      return host(inet '0.0.0.0' + (a - inet '::'));
    end if;
  end if;
  return host;
end
$$;

update links set host_domains = domains_of(pg_temp.canonical_host(host_domains[1]))
where cardinality(host_domains) > 0 and host_domains[1] <> pg_temp.canonical_host(host_domains[1]);

insert into blocked_hosts (host, created_at)
select pg_temp.canonical_host(host), created_at from blocked_hosts where host <> pg_temp.canonical_host(host)
on conflict (host) do nothing;
delete from blocked_hosts where host <> pg_temp.canonical_host(host);
