-- bench-gen.lua: writes one chunk of rdbscope benchmark data inside a redis-server.
-- Run by scripts/bench.sh as `redis-cli --eval scripts/bench-gen.lua , KIND ARGS...`
-- (no KEYS; every key name is built here, which Redis allows outside cluster mode).
-- Deterministic: math.random is seeded from the arguments, so the same call makes the same data.
--
--   users  FIRST COUNT        "user units" FIRST..FIRST+COUNT-1; each unit i makes ~3.8 small keys:
--                             user:<i>:profile (JSON string, 60-220 B, 10% TTL)
--                             user:<i>         (hash, 5-10 fields, 10% TTL)
--                             session:<uuid>   (string 40-110 B, 3 units in 5, always TTL)
--                             cache:product:<i> (string 20-200 B, 2 units in 5, always TTL)
--                             user:<i>:tags    (set, 3-20 members, every 10th one an intset; 3 in 10)
--                             user:<i>:scores  (zset, 5-30 members; 3 in 20)
--                             user:<i>:recent  (list, 5-20 items; 3 in 20)
--                             counter:page:<i>:views (integer string; 1 in 5)
--                             => ~31% of keys carry a TTL (1 hour .. 30 days ahead).
--   hash   KEY FIRST COUNT    HSET fields f:<n> (values 10-60 B) into one hash
--   set    KEY FIRST COUNT    SADD members member:<n>:<hex>
--   intset KEY FIRST COUNT    SADD integer members (large set of integers -> hashtable)
--   zset   KEY FIRST COUNT    ZADD players
--   list   KEY FIRST COUNT    RPUSH events (20-80 B)
--   stream KEY FIRST COUNT    XADD entries with explicit ids <1700000000000+n>-0
--   ttl    KEY MS             PEXPIRE KEY MS

local kind = ARGV[1]
local R = math.random

local words = {
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet',
  'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango',
  'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu', 'red', 'green', 'blue', 'black',
  'white', 'small', 'large', 'fast', 'slow', 'cheap', 'premium', 'organic', 'wireless', 'smart',
  'coffee', 'table', 'chair', 'lamp', 'phone', 'cable', 'shoe', 'shirt', 'book', 'watch',
  'garden', 'kitchen', 'office', 'travel', 'sport', 'music', 'video', 'photo', 'cloud', 'river',
  'mountain', 'ocean', 'forest', 'desert'
}
local firsts = { 'Ada', 'Alan', 'Grace', 'Linus', 'Ken', 'Dennis', 'Barbara', 'Edsger', 'Donald',
  'Margaret', 'John', 'Radia', 'Tim', 'Frances', 'Guido', 'Bjarne', 'Niklaus', 'Leslie', 'Sophie', 'Yukihiro' }
local lasts = { 'Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Thompson', 'Ritchie', 'Liskov', 'Dijkstra',
  'Knuth', 'Hamilton', 'McCarthy', 'Perlman', 'Berners-Lee', 'Allen', 'Rossum', 'Stroustrup', 'Wirth',
  'Lamport', 'Wilson', 'Matsumoto' }
local domains = { 'example.com', 'mail.test', 'corp.example', 'inbox.invalid', 'users.example.org' }
local countries = { 'US', 'DE', 'FR', 'JP', 'BR', 'IN', 'GB', 'CA', 'AU', 'NL', 'SE', 'ES' }
local plans = { 'free', 'free', 'free', 'pro', 'team', 'enterprise' }
local locales = { 'en-US', 'de-DE', 'fr-FR', 'ja-JP', 'pt-BR', 'en-GB' }
local NW, NF, NL, ND, NC = #words, #firsts, #lasts, #domains, #countries

local function phrase(n)
  local t = {}
  for j = 1, n do t[j] = words[R(NW)] end
  return table.concat(t, ' ')
end

local function hex(n)
  local t = {}
  for j = 1, math.ceil(n / 7) do t[j] = string.format('%07x', R(0, 268435455)) end
  return string.sub(table.concat(t), 1, n)
end

local function ttl_ms()
  return R(3600, 30 * 86400) * 1000
end

local function pushed(cmd, key, items)
  -- send items in slices of 400 arguments (Lua's unpack has a C-stack limit)
  local n = #items
  local i = 1
  while i <= n do
    local j = math.min(i + 399, n)
    redis.call(cmd, key, unpack(items, i, j))
    i = j + 1
  end
end

if kind == 'users' then
  local first, count = tonumber(ARGV[2]), tonumber(ARGV[3])
  math.randomseed(first + 17)
  local base_ts = 1700000000
  for i = first, first + count - 1 do
    local fn, ln = firsts[R(NF)], lasts[R(NL)]
    local email = string.format('%s.%s%d@%s', string.lower(fn), string.lower(ln), i % 1000, domains[R(ND)])
    local plan = plans[R(#plans)]
    local country = countries[R(NC)]

    -- user:<i>:profile
    local k = 'user:' .. i .. ':profile'
    local v = string.format('{"id":%d,"name":"%s %s","email":"%s","plan":"%s","country":"%s","bio":"%s"}',
      i, fn, ln, email, plan, country, phrase(R(0, 14)))
    if i % 10 == 0 then redis.call('SET', k, v, 'PX', ttl_ms()) else redis.call('SET', k, v) end

    -- user:<i> hash with 5..10 fields
    k = 'user:' .. i
    local fields = {
      'name', fn .. ' ' .. ln,
      'email', email,
      'age', tostring(R(16, 90)),
      'country', country,
      'created_at', tostring(base_ts + R(0, 50000000)),
      'last_login', tostring(base_ts + 50000000 + R(0, 5000000)),
      'plan', plan,
      'locale', locales[R(#locales)],
      'score', string.format('%.2f', R() * 1000),
      'avatar', 'https://cdn.example.com/a/' .. hex(16) .. '.png',
    }
    local nf = 5 + (i % 6)
    redis.call('HSET', k, unpack(fields, 1, nf * 2))
    if i % 10 == 5 then redis.call('PEXPIRE', k, ttl_ms()) end

    -- session:<uuid> (3 units in 5), always with a TTL
    if i % 5 < 3 then
      k = string.format('session:%s-%s-4%s-%s-%s', hex(8), hex(4), hex(3), hex(4), hex(12))
      v = string.format('{"uid":%d,"ip":"10.%d.%d.%d","csrf":"%s"}', i, R(0, 255), R(0, 255), R(0, 255), hex(R(0, 40)))
      redis.call('SET', k, v, 'PX', ttl_ms())
    end

    -- cache:product:<i> (2 units in 5), 20..200 bytes, always with a TTL
    if i % 5 < 2 then
      k = 'cache:product:' .. i
      v = string.format('{"sku":"%s","price":%d.%02d,"title":"%s"}', hex(8), R(1, 999), R(0, 99), phrase(R(0, 20)))
      redis.call('SET', k, v, 'PX', ttl_ms())
    end

    -- user:<i>:tags set (3 in 10), every 10th an intset
    if i % 10 < 3 then
      local m = {}
      local n = R(3, 20)
      if i % 10 == 2 then
        for j = 1, n do m[j] = tostring(R(1, 100000)) end
      else
        for j = 1, n do m[j] = words[R(NW)] .. ':' .. R(1, 50) end
      end
      redis.call('SADD', 'user:' .. i .. ':tags', unpack(m))
    end

    -- user:<i>:scores zset (3 in 20)
    if i % 20 < 3 then
      local m = {}
      local n = R(5, 30)
      for j = 1, n do
        m[2 * j - 1] = tostring(R(0, 100000))
        m[2 * j] = 'game:' .. R(1, 500)
      end
      redis.call('ZADD', 'user:' .. i .. ':scores', unpack(m))
    end

    -- user:<i>:recent list (3 in 20)
    if i % 20 >= 3 and i % 20 < 6 then
      local m = {}
      local n = R(5, 20)
      for j = 1, n do m[j] = 'viewed:product:' .. R(1, 5000000) .. ':' .. (base_ts + R(0, 50000000)) end
      redis.call('RPUSH', 'user:' .. i .. ':recent', unpack(m))
    end

    -- counter:page:<i>:views (1 in 5), integer-encoded string
    if i % 5 == 4 then
      redis.call('SET', 'counter:page:' .. i .. ':views', tostring(R(0, 5000000)))
    end
  end
  return count
end

if kind == 'ttl' then
  return redis.call('PEXPIRE', ARGV[2], ARGV[3])
end

local key, first, count = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
math.randomseed(first + #key * 131)
local items = {}

if kind == 'hash' then
  for n = first, first + count - 1 do
    items[#items + 1] = 'f:' .. n
    items[#items + 1] = string.format('%s|%d|%s', hex(R(4, 16)), R(0, 1000000), phrase(R(0, 6)))
  end
  pushed('HSET', key, items)
elseif kind == 'set' then
  for n = first, first + count - 1 do items[#items + 1] = 'member:' .. n .. ':' .. hex(R(0, 24)) end
  pushed('SADD', key, items)
elseif kind == 'intset' then
  for n = first, first + count - 1 do items[#items + 1] = tostring(n * 7 + R(0, 6)) end
  pushed('SADD', key, items)
elseif kind == 'zset' then
  for n = first, first + count - 1 do
    items[#items + 1] = string.format('%.3f', R() * 1000000)
    items[#items + 1] = 'player:' .. n .. ':' .. hex(R(0, 12))
  end
  pushed('ZADD', key, items)
elseif kind == 'list' then
  for n = first, first + count - 1 do
    items[#items + 1] = string.format('%d|%s|%s', 1700000000 + n, words[R(NW)], hex(R(8, 60)))
  end
  pushed('RPUSH', key, items)
elseif kind == 'stream' then
  local types = { 'click', 'view', 'view', 'view', 'purchase', 'signup' }
  for n = first, first + count - 1 do
    redis.call('XADD', key, (1700000000000 + n) .. '-0',
      'type', types[R(#types)], 'user', tostring(R(1, 2000000)),
      'page', '/p/' .. words[R(NW)] .. '/' .. R(1, 100000), 'ms', tostring(R(1, 3000)))
  end
else
  return redis.error_reply('ERR bench-gen.lua: unknown kind ' .. tostring(kind))
end
return count
