-- scrapy_simhash's Redis index: probe, check-and-insert, insert, remove and fetch, each one
-- script run without interleaving. See scrapy_simhash/index/redis_index.py for the key
-- layout, the arguments and the argument for correctness.
--
-- KEYS: meta, docs, fps, then one hash per table.
-- ARGV: mode, token, k, w (value bytes), f (field bytes), docid, expected header, record,
--       fingerprint, then the tables' arguments packed in one string, for each table:
--       field (f bytes), query value (w), lo (4), hi (4), old field (f), old value (w).
local mode = ARGV[1]
if redis.call('HGET', KEYS[1], 'created') ~= ARGV[2] then
  return redis.error_reply('SIMHASHCHANGED the index was reset or replaced since it was opened')
end
local docs, fps = KEYS[2], KEYS[3]
local band, bxor, rshift = bit.band, bit.bxor, bit.rshift
local byte, sub, floor = string.byte, string.sub, math.floor

if mode == 'fetch' then
  -- the documents of the fingerprints ARGV[3..]: a flat list of records
  local out = {}
  for i = 3, #ARGV do
    local links = redis.call('HGET', fps, ARGV[i])
    if links then
      for p = 1, #links, 16 do
        local data = redis.call('HGET', docs, sub(links, p, p + 15))
        if data then out[#out + 1] = data end
      end
    end
  end
  return out
end

local k, w, fb = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local docid, expect = ARGV[6], ARGV[7]
local n = #KEYS - 3

-- a value's first 4 bytes, and its other w - 4, as numbers (at most 32 bits each)
local function head(b, p)
  local b1, b2, b3, b4 = byte(b, p, p + 3)
  return ((b1 * 256 + b2) * 256 + b3) * 256 + b4
end
local function tail(b, p)
  local t = 0
  for j = p + 4, p + w - 1 do t = t * 256 + byte(b, j) end
  return t
end
local function pop(x)  -- bits set in a 32-bit number
  x = x - band(rshift(x, 1), 0x55555555)
  x = band(x, 0x33333333) + band(rshift(x, 2), 0x33333333)
  x = band(x + rshift(x, 4), 0x0f0f0f0f)
  return x % 255
end
-- first position (0-based) in the bucket whose value is >= (h, t), by bisection
local function position(b, h0, t0)
  local lo, hi = 0, #b / w
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    local p = mid * w + 1
    local h = head(b, p)
    if h < h0 or (h == h0 and t0 and tail(b, p) < t0) then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- the tables' arguments: F field, Q query value, LO and HI the range of the first 4 bytes of
-- a value within the query's prefix, OF and OV the old fingerprint's field and value
local F, Q, LO, HI, OF, OV = {}, {}, {}, {}, {}, {}
do
  local blob, p = ARGV[10], 1
  for i = 1, n do
    F[i] = sub(blob, p, p + fb - 1)
    p = p + fb
    Q[i] = sub(blob, p, p + w - 1)
    LO[i], HI[i] = head(blob, p + w), head(blob, p + w + 4)
    p = p + w + 8
    OF[i] = sub(blob, p, p + fb - 1)
    OV[i] = sub(blob, p + fb, p + fb + w - 1)
    p = p + fb + w
  end
end

-- the query's buckets as the probe read them (false: none), for the insert that follows
local BK = {}

-- every stored value within k of the query: {table, value, distance}, table 0-based
local function probe()
  local out = {}
  for i = 1, n do
    local b = redis.call('HGET', KEYS[3 + i], F[i])
    BK[i] = b
    if b then
      local q = Q[i]
      local qh, qt = head(q, 1), tail(q, 1)
      local hi, m = HI[i], #b / w
      local j = position(b, LO[i], nil)
      while j < m do
        local p = j * w + 1
        local h = head(b, p)
        if h > hi then break end
        local d = pop(bxor(h, qh))
        if d <= k then
          d = d + pop(bxor(tail(b, p), qt))
          if d <= k then
            out[#out + 1] = i - 1
            out[#out + 1] = sub(b, p, p + w - 1)
            out[#out + 1] = d
          end
        end
        j = j + 1
      end
    end
  end
  return out
end

if mode == 'probe' then return probe() end

local old = redis.call('HGET', docs, docid)
local held = old and sub(old, 1, 16) or ''
if held ~= expect then return {-1, held} end
local old_fp = sub(expect, 1, 8)

-- the value v into (or out of) table i's bucket f
local function table_add(i, f, v)
  local key = KEYS[3 + i]
  local b = BK[i]
  if b == nil then b = redis.call('HGET', key, f) end
  if not b then redis.call('HSET', key, f, v) return end
  local at = position(b, head(v, 1), tail(v, 1)) * w
  if sub(b, at + 1, at + w) == v then return end
  redis.call('HSET', key, f, sub(b, 1, at) .. v .. sub(b, at + 1))
end
local function table_remove(i, f, v)
  local key = KEYS[3 + i]
  if f == F[i] then BK[i] = nil end  -- the probed bucket changes: read it again to add
  local b = redis.call('HGET', key, f)
  if not b then return end
  local at = position(b, head(v, 1), tail(v, 1)) * w
  if sub(b, at + 1, at + w) ~= v then return end
  b = sub(b, 1, at) .. sub(b, at + w + 1)
  if b == '' then redis.call('HDEL', key, f) else redis.call('HSET', key, f, b) end
end

-- detach the document from its old fingerprint; the last document's takes it out of the tables
local function unlink()
  local links = redis.call('HGET', fps, old_fp) or ''
  local kept = {}
  for p = 1, #links, 16 do
    local id = sub(links, p, p + 15)
    if id ~= docid then kept[#kept + 1] = id end
  end
  if #kept > 0 then
    redis.call('HSET', fps, old_fp, table.concat(kept))
    return
  end
  redis.call('HDEL', fps, old_fp)
  for i = 1, n do table_remove(i, OF[i], OV[i]) end
  redis.call('HINCRBY', KEYS[1], 'fingerprints', -1)
end

if mode == 'remove' then
  if expect == '' then return {0, 0} end
  redis.call('HDEL', docs, docid)
  unlink()
  return {0, 1}
end

local fp = ARGV[9]
if mode == 'check' then
  local found = probe()
  -- the document's own entry is no match, unless another document shares its fingerprint
  local own = expect ~= '' and redis.call('HGET', fps, old_fp) == docid
  local matches = {}
  for c = 1, #found, 3 do
    local i = found[c] + 1
    if not (own and F[i] == OF[i] and found[c + 1] == OV[i]) then
      matches[#matches + 1] = found[c]
      matches[#matches + 1] = found[c + 1]
      matches[#matches + 1] = found[c + 2]
    end
  end
  if #matches > 0 then return {1, matches} end
elseif mode ~= 'insert' then
  return redis.error_reply('SIMHASHMODE unknown mode ' .. mode)
end

-- store: the record, its fingerprint's link, and a fingerprint new to the index in the tables
redis.call('HSET', docs, docid, ARGV[8])
if expect ~= '' then
  if old_fp == fp then return {0, 0} end
  unlink()
end
local links = redis.call('HGET', fps, fp)
if links then
  redis.call('HSET', fps, fp, links .. docid)
  return {0, 0}
end
redis.call('HSET', fps, fp, docid)
for i = 1, n do table_add(i, F[i], Q[i]) end
redis.call('HINCRBY', KEYS[1], 'fingerprints', 1)
return {0, 1}
