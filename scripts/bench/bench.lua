-- wrk script for `npm run bench`. One script for every point, so the ceilings and the service
-- cost the load generator exactly the same. Arguments after `--`:
--   redirect FILE START STRIDE  GET /r/{code}, walking the codes in FILE (first tab-separated
--                               column, one per line) from line START; thread k starts STRIDE*k
--                               lines further on, so threads do not walk in step
--   visit FILE START STRIDE     as redirect, but like browsers: a User-Agent of 8 families (phones,
--                               tablets, desktops; 256 distinct strings), a Referer from 8 hosts
--                               and an X-Forwarded-For from 256 public addresses (the service must
--                               trust 127.0.0.1), 4,096 distinct requests in all (or one per
--                               code, when FILE has more), so a link of 1,000 has about 4
--                               distinct visitors
--   campaign FILE START STRIDE  as visit, but each request a User-Agent never sent before (a version
--                               number that counts up, per thread): what a campaign forging its
--                               agents costs a link whose device rule must read each one
--   list FILE                   GET /api/v1/links, a bearer token per line of FILE, rotating
--   create FILE                 POST /api/v1/links, a bearer token per line of FILE, rotating
--   patch FILE                  PATCH /api/v1/links/{code} with {"url": url}, from lines
--                               "token<TAB>code<TAB>url" of FILE, rotating (the url is the link's
--                               own, so the links stay as seeded)
--   delete FILE START           DELETE /api/v1/links/{code}, from lines "token<TAB>code" of FILE,
--                               each once, from line START (thread k from START + k * 100000)
--   login USERNAME PASSWORD     POST /api/v1/auth/login, a random X-Forwarded-For on each request
--                               (the service must trust 127.0.0.1 as a proxy) so the per-client
--                               rate limit never refuses
-- Requests are built once in init(), except the login's and the campaign's (they differ each time).
-- done() prints one line: BENCH_JSON {...}, latencies in microseconds.

local threads_seen = 0

function setup(thread)
  thread:set("tid", threads_seen)
  threads_seen = threads_seen + 1
end

local reqs, n, i
local login_body, login_user
local campaign_codes, forged = nil, 0

local function rows(path)
  local out = {}
  local f = assert(io.open(path, "r"))
  for line in f:lines() do
    local cols = {}
    for col in line:gmatch("[^\t]+") do cols[#cols + 1] = col end
    if #cols > 0 then out[#out + 1] = cols end
  end
  f:close()
  assert(#out > 0, "no lines in " .. path)
  return out
end

local function first_columns(path)
  local out = {}
  local f = assert(io.open(path, "r"))
  for line in f:lines() do
    local first = line:match("^([^\t]+)")
    if first then out[#out + 1] = first end
  end
  f:close()
  assert(#out > 0, "no lines in " .. path)
  return out
end

function init(args)
  local mode = args[1]
  if mode == "redirect" then
    local codes = first_columns(args[2])
    local start, stride = tonumber(args[3] or "0"), tonumber(args[4] or "0")
    n = #codes
    reqs = {}
    for k = 1, n do reqs[k] = wrk.format("GET", "/r/" .. codes[k]) end
    i = (start + stride * (tid or 0)) % n
  elseif mode == "campaign" then
    campaign_codes = first_columns(args[2])
    local start, stride = tonumber(args[3] or "0"), tonumber(args[4] or "0")
    n = #campaign_codes
    i = (start + stride * (tid or 0)) % n
  elseif mode == "visit" then
    local codes = first_columns(args[2])
    local start, stride = tonumber(args[3] or "0"), tonumber(args[4] or "0")
    local agents = {
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Mobile Safari/537.36",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36 Edg/126.0.%d.0",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36",
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Safari/605.1.15",
      "Mozilla/5.0 (X11; Linux x86_64; rv:12%d.0) Gecko/20100101 Firefox/12%d.0",
      "Mozilla/5.0 (iPad; CPU OS 17_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.%d Chrome/121.0 Mobile Safari/537.36",
    }
    -- at least one request per code: a walk over more than 4,096 codes visits each of them
    n = math.max(4096, #codes)
    reqs = {}
    for k = 1, n do
      local a = (k * 37) % 256
      local headers = {
        ["User-Agent"] = string.gsub(agents[k % 8 + 1], "%%d", tostring(math.floor(k / 8) % 32)),
        ["Referer"] = "https://site" .. (k % 8) .. ".example/article?id=" .. k,
        ["X-Forwarded-For"] = (11 + a % 200) .. "." .. a .. ".0.1",
      }
      reqs[k] = wrk.format("GET", "/r/" .. codes[(k - 1) % #codes + 1], headers)
    end
    i = (start + stride * (tid or 0)) % n
  elseif mode == "list" or mode == "create" then
    local tokens = first_columns(args[2])
    n = #tokens
    reqs = {}
    for k = 1, n do
      local headers = { ["Authorization"] = "Bearer " .. tokens[k] }
      if mode == "list" then
        reqs[k] = wrk.format("GET", "/api/v1/links", headers)
      else
        headers["Content-Type"] = "application/json"
        reqs[k] = wrk.format("POST", "/api/v1/links", headers, '{"url":"https://example.org/created/by/bench?k=' .. k .. '"}')
      end
    end
    i = ((tid or 0) * 7919) % n
  elseif mode == "patch" or mode == "delete" then
    local lines = rows(args[2])
    n = #lines
    reqs = {}
    for k = 1, n do
      local token, code, url = lines[k][1], lines[k][2], lines[k][3]
      local headers = { ["Authorization"] = "Bearer " .. token }
      if mode == "patch" then
        headers["Content-Type"] = "application/json"
        reqs[k] = wrk.format("PATCH", "/api/v1/links/" .. code, headers, '{"url":"' .. url .. '"}')
      else
        reqs[k] = wrk.format("DELETE", "/api/v1/links/" .. code, headers)
      end
    end
    if mode == "patch" then
      i = ((tid or 0) * 7919) % n
    else
      i = (tonumber(args[3] or "0") + (tid or 0) * 100000) % n
    end
  elseif mode == "login" then
    login_body = '{"username":"' .. args[2] .. '","password":"' .. args[3] .. '"}'
    math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
  else
    error("bench.lua: unknown mode " .. tostring(mode))
  end
end

function request()
  if login_body then
    local ip = string.format("10.%d.%d.%d", math.random(0, 255), math.random(0, 255), math.random(1, 254))
    return wrk.format("POST", "/api/v1/auth/login",
      { ["Content-Type"] = "application/json", ["X-Forwarded-For"] = ip }, login_body)
  end
  i = i + 1
  if i > n then i = 1 end
  if campaign_codes then
    forged = forged + 1
    return wrk.format("GET", "/r/" .. campaign_codes[i], {
      ["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0." .. forged .. "." .. (tid or 0) .. " Safari/537.36",
      ["Referer"] = "https://site" .. (i % 8) .. ".example/article?id=" .. i,
      ["X-Forwarded-For"] = (11 + i % 200) .. "." .. (i % 256) .. ".0.1",
    })
  end
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect_errors":%d,"read_errors":%d,' ..
    '"write_errors":%d,"status_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"p999_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    latency.max, latency.mean))
end
