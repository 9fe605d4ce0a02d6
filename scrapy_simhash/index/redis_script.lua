-- scrapy_simhash's Redis index: probe, query, check-and-insert, decide, insert, remove and drop
-- records, each call one script run without interleaving, for one item or a batch of
-- them in order. See scrapy_simhash/index/redis_index.py for the key layout, the arguments and
-- the argument for correctness.
--
-- KEYS: meta, docs, fps, sigs, sents, drops, dseq, dkept, reps, then one hash per table.
-- ARGV: mode, token, k, w (value bytes), f (field bytes),
--       the field bits, the tables' inverse permutations packed in one string (for each table:
--       a count of moves, then each move as source bit, width, destination bit, one byte each),
--       the bound on drop records (0: none are kept), the rules' names in their stored order
--       (space-separated), the count of the rule's parameters and the parameters as name,
--       value pairs (none but for the modes that decide: check, decide); then the items,
--       ITEM arguments each: docid, expected header, record, fingerprint, the tables'
--       arguments packed in one string (for each table: field (f bytes), query value (w),
--       lo (4), hi (4), old field (f), old value (w)), the page's
--       sealed packed signature ('' for a bare fingerprint), the time of a drop (8 bytes, a
--       big-endian double), what mode 'drop' records (the kept document's id, the distance
--       and the rule's code, 18 bytes; else '') and the page's site (8 bytes, or '').
-- The answer: one per item, in order.
local mode = ARGV[1]
local META = redis.call('HMGET', KEYS[1], 'created', 'fingerprints', 'drops_seq')
if META[1] ~= ARGV[2] then
  return redis.error_reply('SIMHASHCHANGED the index was reset, replaced or lost (a server restarted without persistence) since it was opened')
end
-- the counts the modes that write add to (HINCRBY), read before anything is written: a script
-- that failed midway would leave what it wrote (Redis undoes nothing)
for j = 2, 3 do
  if META[j] and not string.match(META[j], '^%-?%d+$') then
    return redis.error_reply('SIMHASHDAMAGED the index meta holds a count that is not a number')
  end
end
local docs, fps, sigs, sents = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local drops, dseq, dkept, reps = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local T = 9  -- KEYS[T + i] is table i's hash
local band, bxor, rshift, bnot = bit.band, bit.bxor, bit.rshift, bit.bnot
local byte, sub, floor, char = string.byte, string.sub, math.floor, string.char
local min, max, ceil = math.min, math.max, math.ceil

local k, w, fb = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local fbits, MOVES_BLOB = tonumber(ARGV[6]), ARGV[7]
local LIMIT, RULE_NAMES = tonumber(ARGV[8]), ARGV[9]
local FIRST = 11 + 2 * tonumber(ARGV[10])  -- the first item's first argument
local ITEM = 9
local n = #KEYS - T

-- the item at hand (load_item): its document id, the record header it expects, its record,
-- fingerprint, sealed signature, drop time, drop arguments and site; the tables' arguments: F field,
-- Q query value, LO and HI the range of the first 4 bytes of a value within the query's
-- prefix (old_value gives the old fingerprint's field and value); BK the query's buckets as the
-- probe read them (false: none), and AT where the query's value goes in each (the position of
-- the first value not below it, 1-based), for the insert that follows
local docid, expect, record, fp, signature, drop_seen, dropping, site
local F, Q, LO, HI, BK, AT
local BLOB  -- the item's tables' arguments, packed

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
-- first position (0-based) in the bucket whose value is >= (h, t), by bisection (among its
-- whole values: a bucket cut short is damage, which probe and whole_buckets report)
local function position(b, h0, t0)
  local lo, hi = 0, floor(#b / w)
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    local p = mid * w + 1
    local b1, b2, b3, b4 = byte(b, p, p + 3)
    local h = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    if h < h0 or (h == h0 and t0 and tail(b, p) < t0) then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- make the item whose arguments start at ARGV[b] the item at hand
local function load_item(b)
  docid, expect, record, fp = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
  signature, drop_seen, dropping, site = ARGV[b + 5], ARGV[b + 6], ARGV[b + 7], ARGV[b + 8]
  F, Q, LO, HI, BK, AT = {}, {}, {}, {}, {}, {}
  local blob, p = ARGV[b + 4], 1
  BLOB = blob
  for i = 1, n do
    F[i] = sub(blob, p, p + fb - 1)
    p = p + fb
    Q[i] = sub(blob, p, p + w - 1)
    LO[i], HI[i] = head(blob, p + w), head(blob, p + w + 4)
    p = p + w + 8 + fb + w
  end
end

-- the damage a bucket is that does not hold whole values of w bytes (no checksum guards a
-- bucket: this is what a bucket cut short or grown shows)
local function damaged_bucket(i, b)
  return redis.error_reply('SIMHASHDAMAGED a bucket of table ' .. (i - 1) .. ' holds ' .. #b
    .. ' bytes, not whole values of ' .. w)
end

-- every stored value within k of the query: {table, value, distance}, table 0-based; an
-- error for a damaged bucket
local function probe()
  local out = {}
  for i = 1, n do
    local b = redis.call('HGET', KEYS[T + i], F[i])
    BK[i] = b
    if b and #b % w ~= 0 then return damaged_bucket(i, b) end
    if b then
      local q = Q[i]
      local q1, q2, q3, q4, q5, q6, q7, q8 = byte(q, 1, w)
      local qh, qt = head(q, 1), tail(q, 1)
      local hi, last = HI[i], #b - w + 1
      local p = position(b, LO[i], nil) * w + 1
      local at = nil
      -- the hot loop, inlined. A value within k bits of the query differs from it in at most
      -- k of its w bytes, so it has at least 8 - k equal of 8 (bytes past w are nil on both
      -- sides, equal): a test of bytes that rejects nearly every other value before its bits
      -- are counted (up to k + 1, each step clearing the lowest)
      while p <= last do
        local c1, c2, c3, c4, c5, c6, c7, c8 = byte(b, p, p + w - 1)
        local h = ((c1 * 256 + c2) * 256 + c3) * 256 + c4
        if h > hi then break end
        if not at and (h > qh or (h == qh and tail(b, p) >= qt)) then at = p end
        local e = 0
        if c1 == q1 then e = e + 1 end
        if c2 == q2 then e = e + 1 end
        if c3 == q3 then e = e + 1 end
        if c4 == q4 then e = e + 1 end
        if c5 == q5 then e = e + 1 end
        if c6 == q6 then e = e + 1 end
        if c7 == q7 then e = e + 1 end
        if c8 == q8 then e = e + 1 end
        if e + k >= 8 then
          local x, d = bxor(head(b, p), qh), 0
          while x ~= 0 and d <= k do x, d = band(x, x - 1), d + 1 end
          if d <= k then
            x = bxor(tail(b, p), qt)
            while x ~= 0 and d <= k do x, d = band(x, x - 1), d + 1 end
            if d <= k then
              out[#out + 1] = i - 1
              out[#out + 1] = sub(b, p, p + w - 1)
              out[#out + 1] = d
            end
          end
        end
        p = p + w
      end
      AT[i] = at or p
    end
  end
  return out
end

-- the answers of run for every item, in order: {answers}, or {answers so far, error} when an
-- item met a damaged page signature (what the items before it wrote stands)
local function run_items(run)
  local out = {}
  for b = FIRST, #ARGV, ITEM do
    load_item(b)
    local answer = run()
    if answer.err then return {out, answer.err} end
    out[#out + 1] = answer
  end
  return {out}
end

-- the modes that need no more than what is defined so far return as soon as it is: a script
-- defines only the functions its mode needs (each closure made costs the script time)
if mode == 'probe' then return run_items(probe) end

-- the original fingerprint (8 bytes, big-endian) of value v in table i: its permuted bits
-- (the field's on top of the value's) moved back by the table's inverse permutation
local MOVES, P2  -- P2[x] = 2^x; both made at the first use
-- a number's 4 bytes, big-endian
local function be4(x)
  return char(floor(x / 16777216), floor(x / 65536) % 256, floor(x / 256) % 256, x % 256)
end
local function original(i, v)
  if not MOVES then
    MOVES, P2 = {}, {}
    for x = 0, 32 do P2[x] = 2 ^ x end
    local blob, p = MOVES_BLOB, 1
    for t = 1, n do
      local m = byte(blob, p)
      MOVES[t] = {byte(blob, p + 1, p + 3 * m)}
      p = p + 1 + 3 * m
    end
  end
  -- the permuted fingerprint as 32-bit halves: the field's bits on top of the value's
  local f = 0
  for j = 1, fb do f = f * 256 + byte(F[i], j) end
  local vhigh = 0
  for j = 1, w - 4 do vhigh = vhigh * 256 + byte(v, j) end
  local hi, lo = f * P2[32 - fbits] + vhigh, head(v, w - 3)
  -- each move's bits, 16 at a time, from (hi, lo) to their place in (ohi, olo)
  local ohi, olo = 0, 0
  local moves = MOVES[i]
  for c = 1, #moves, 3 do
    local src, width, dst = moves[c], moves[c + 1], moves[c + 2]
    while width > 0 do
      local cnt = min(width, 16)
      local x
      if src >= 32 then
        x = floor(hi / P2[src - 32]) % P2[cnt]
      elseif src + cnt <= 32 then
        x = floor(lo / P2[src]) % P2[cnt]
      else
        local below = 32 - src
        x = floor(lo / P2[src]) + (hi % P2[cnt - below]) * P2[below]
      end
      if dst >= 32 then
        ohi = ohi + x * P2[dst - 32]
      elseif dst + cnt <= 32 then
        olo = olo + x * P2[dst]
      else
        local below = 32 - dst
        olo = olo + (x % P2[below]) * P2[dst]
        ohi = ohi + floor(x / P2[below])
      end
      src, dst, width = src + cnt, dst + cnt, width - cnt
    end
  end
  return be4(ohi) .. be4(olo)
end

-- each(id, record, distance) for every stored document of the probe's answer found (every
-- fingerprint once)
local function documents(found, each)
  local near = {}
  for c = 1, #found, 3 do
    local fpo = original(found[c] + 1, found[c + 1])
    if not near[fpo] then
      near[fpo] = true
      local links = redis.call('HGET', fps, fpo)
      if links then
        for p = 1, #links, 16 do
          local id = sub(links, p, p + 15)
          local data = redis.call('HGET', docs, id)
          if data then each(id, data, found[c + 2]) end
        end
      end
    end
  end
end
-- every stored document within k: a flat list of record, distance
local function query()
  local out = {}
  local found = probe()
  if found.err then return found end
  documents(found, function(_, data, d)
    out[#out + 1] = data
    out[#out + 1] = d
  end)
  return out
end


if mode == 'query' then return run_items(query) end

-- what the modes below need besides (defined here: the modes above go without them)
local function pop(x)  -- bits set in a 32-bit number
  x = x - band(rshift(x, 1), 0x55555555)
  x = band(x, 0x33333333) + band(rshift(x, 2), 0x33333333)
  x = band(x + rshift(x, 4), 0x0f0f0f0f)
  return x % 255
end
local CRC
-- the CRC-32 of s (zlib's crc32(s, start)), as a number in [0, 2^32)
local function crc32(s, start)
  if not CRC then
    CRC = {}
    for i = 0, 255 do
      local c = i
      for _ = 1, 8 do
        if band(c, 1) == 1 then c = bxor(rshift(c, 1), 0xEDB88320) else c = rshift(c, 1) end
      end
      CRC[i] = c
    end
  end
  local c = bit.bnot(start or 0)
  for i = 1, #s do c = bxor(rshift(c, 8), CRC[band(bxor(c, byte(s, i)), 255)]) end
  c = bit.bnot(c)
  if c < 0 then c = c + 4294967296 end
  return c
end
-- the field and value of the old fingerprint (the record's the client read) in table i, read
-- from the item's arguments only when a document is unlinked
local function old_value(i)
  local p = (i - 1) * (2 * (fb + w) + 8) + fb + w + 9
  return sub(BLOB, p, p + fb - 1), sub(BLOB, p + fb, p + fb + w - 1)
end

-- -- page signatures -------------------------------------------------------------------------

-- a little-endian 32-bit number at p
local function le32(s, p)
  local b1, b2, b3, b4 = byte(s, p, p + 3)
  return ((b4 * 256 + b3) * 256 + b2) * 256 + b1
end
-- a packed signature (PageSignature.pack, sealed or not): fingerprint, numbers' bits and
-- shingles sketch as 32-bit halves, words, number count, and the sentences as their 8 packed
-- bytes
local function parsed(s)
  local count = byte(s, 31)
  if not count or #s < 31 + 8 * count then
    return redis.error_reply('SIMHASHDAMAGED a page signature of ' .. #s .. ' bytes')
  end
  local sig = {
    fl = le32(s, 1), fh = le32(s, 5), nl = le32(s, 9), nh = le32(s, 13),
    sl = le32(s, 17), sh = le32(s, 21),
    words = le32(s, 25), nc = byte(s, 29) + 256 * byte(s, 30), s = {},
  }
  for j = 0, count - 1 do sig.s[j + 1] = sub(s, 32 + 8 * j, 39 + 8 * j) end
  return sig
end
-- a stored signature (sealed with a CRC-32 seeded with the CRC-32 of its document's id), parsed;
-- an error when it fails its checksum
local function stored_signature(s, id)
  local n = #s - 4
  if n < 0 or crc32(sub(s, 1, n), crc32(id)) ~= le32(s, n + 1) then
    return redis.error_reply('SIMHASHDAMAGED a page signature fails its checksum')
  end
  return parsed(s)
end
-- the postings key of a sentence: its hash big-endian (packed little-endian)
local function sentence_key(s) return s:reverse() end
-- a signature's distinct sentences
local function distinct(sig)
  local out, seen = {}, {}
  for _, s in ipairs(sig.s) do
    if not seen[s] then seen[s] = true out[#out + 1] = s end
  end
  return out
end


-- the rule's parameters (Python's Rule, by name), read by the modes that decide
local R = {}
for i = 11, FIRST - 1, 2 do R[ARGV[i]] = tonumber(ARGV[i + 1]) end

-- whether one shared sentence is enough between the page and a stored page of fingerprint
-- (fl, fh) and shingles sketch (sl, sh) (Rule.takes_one)
local function takes_one(page, fl, fh, sl, sh)
  if R.runs_same < 0 or (page.sl == 0 and page.sh == 0) or (sl == 0 and sh == 0) then
    return false
  end
  local runs_apart = pop(bxor(page.sl, sl)) + pop(bxor(page.sh, sh))
  if runs_apart <= R.runs_same then return true end
  return runs_apart <= R.runs_near
    and pop(bxor(page.fl, fl)) + pop(bxor(page.fh, fh)) <= k + R.near
end
-- the same, read alone from a packed signature s (before its checksum)
local function packed_takes_one(page, s)
  if #s < 31 then return false end
  return takes_one(page, le32(s, 1), le32(s, 5), le32(s, 17), le32(s, 21))
end

-- whether a page's list of long sentences (longest first) begins with its first n in shared
local function heads(page, shared, n)
  for i = 1, min(n, #page.s) do
    if not shared[page.s[i]] then return false end
  end
  return true
end

-- whether the shorter page reads as contained in the longer: the shorter's list begins with
-- the sentences they share (the set common, n of them), the longer's with text of its own
-- (Python's _reads_contained)
local function reads_contained(a, b, common, n)
  if a.words == b.words then return false end
  local shorter, longer = a, b
  if b.words < a.words then shorter, longer = b, a end
  return n > 0 and heads(shorter, common, n) and not heads(longer, common, n)
end

-- the rule by which page is a near duplicate of stored, or nil (Rule.decide); counted: the
-- shared sentences that pass the guard (nil: every shared sentence)
local function rule_decide(page, stored, counted)
  local longer = max(page.words, stored.words)
  local shorter = 1.0
  if longer > 0 then shorter = min(page.words, stored.words) / longer end
  local fewer = min(page.nc, stored.nc)
  if fewer >= R.numbers_min and fewer >= R.numbers_ratio * max(page.nc, stored.nc)
    and shorter >= R.numbers_length
    and page.nc >= R.numbers_density * page.words
    and stored.nc >= R.numbers_density * stored.words then
    -- each page's numbers that the other lacks (Rule.numbers_differ)
    local own_p = pop(band(page.nl, bnot(stored.nl))) + pop(band(page.nh, bnot(stored.nh)))
    local own_s = pop(band(stored.nl, bnot(page.nl))) + pop(band(stored.nh, bnot(page.nh)))
    if own_p >= R.numbers_own and own_s >= R.numbers_own
        and own_p + own_s >= R.numbers_own_both then
      if (page.nc >= R.numbers_dense * page.words and stored.nc >= R.numbers_dense * stored.words
          and page.nc <= R.numbers_held and stored.nc <= R.numbers_held)
        or (own_p >= R.numbers_share * (pop(page.nl) + pop(page.nh))
          and own_s >= R.numbers_share * (pop(stored.nl) + pop(stored.nh))) then
        return nil
      end
    end
  end
  local held = {}
  for _, s in ipairs(stored.s) do held[s] = true end
  local common, shared = {}, 0
  for _, s in ipairs(distinct(page)) do
    if held[s] then common[s] = true shared = shared + 1 end
  end
  local d = pop(bxor(page.fl, stored.fl)) + pop(bxor(page.fh, stored.fh))
  local fewer = min(#page.s, #stored.s)
  -- a signature without the shingles sketch (0) has no say
  local sketched = not ((page.sl == 0 and page.sh == 0) or (stored.sl == 0 and stored.sh == 0))
  local runs_apart = 0
  if sketched then
    runs_apart = pop(bxor(page.sl, stored.sl)) + pop(bxor(page.sh, stored.sh))
  end
  local runs_agree = runs_apart <= R.shingles_distance
  local runs_alike = sketched and runs_apart <= R.runs_near -- a few edits, at most
  -- not the same text: no long sentence shared and the fingerprints apart (unless most runs
  -- of words are the same), or at most one shared and, at like length, under about half
  -- their runs of words (a rewrite)
  local rewritten = fewer >= R.sentences_veto
    and ((shared == 0 and d >= R.veto_distance and not runs_alike)
      or (shared <= 1 and sketched and runs_apart >= R.veto_runs and shorter >= R.veto_length))
  if d <= k and runs_agree and not (shorter < R.hamming_length or rewritten) then
    return 'hamming'
  end
  local needed = max(R.shared, ceil(R.shared_share * fewer))
  if (d <= k + R.near and runs_agree) or runs_alike then
    needed = R.shared
  end
  -- one sentence to find it by when the runs of words say the rest (Rule.takes_one)
  if takes_one(page, stored.fl, stored.fh, stored.sl, stored.sh) then
    needed = min(needed, 1)
  end
  local counts = counted or shared
  -- a shared block of prose (a company's boilerplate, a disclaimer) in two texts otherwise
  -- unrelated
  if counts < R.block_shared and d >= R.block_distance and sketched
    and runs_apart >= R.block_runs then
    return nil
  end
  -- the same whatever the fingerprints when the runs of words are as far apart as unrelated
  -- texts and not every long sentence of the page with fewer is shared (whether the guard
  -- lets it count or not), unless the shorter page reads as contained in the longer (a box
  -- of prose both carry at the top weighs as a lead and brings the fingerprints near)
  if counts < R.block_shared and shared < fewer and sketched
    and runs_apart >= R.block_far_runs and not reads_contained(page, stored, common, shared) then
    return nil
  end
  -- unrelated as wholes, of like length, and not every long sentence of the page with fewer
  -- shared, whether the guard lets it count or not (a listing's other posts)
  if shared < fewer and d >= R.apart_distance and sketched
    and runs_apart >= R.apart_runs and shorter >= R.apart_length then
    return nil
  end
  if counts >= needed and shorter >= R.length then return 'sentences' end
  -- contained: what the longer adds is not the article's prose, and the shorter's runs of
  -- words are among the longer's (their sketches as far apart as containment makes them)
  if counts >= max(R.contained, fewer - 1) and shorter >= R.contained_length
    and not (sketched and runs_apart > 32 * (1 - shorter) + R.contained_runs) then
    return 'sentences'
  end
  return nil
end

-- a document record's key (header: fingerprint 8, first seen 8, key length 4; then the key,
-- the JSON and a CRC-32 of 4), or nil for a record too short to hold them: cut by damage, whose
-- header read as numbers would fail the script (the checksum is the client's to check)
local function record_key(data)
  if #data < 24 then return nil end
  local n = head(data, 17)
  if #data < 24 + n then return nil end
  return sub(data, 21, 20 + n)
end
-- the damage a record that record_key refuses is, as decide answers it
local function damaged_record(data)
  return redis.error_reply('SIMHASHDAMAGED a document record of ' .. #data .. ' bytes')
end
-- whether a < b, byte by byte (Lua's < follows the server's locale)
local function before(a, b)
  local m = min(#a, #b)
  for i = 1, m do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end


-- the decision of SimhashIndex._decide: {record, distance, rule, id, signature} of the stored
-- document (but docid) the page is a near duplicate of (its signature by the sentence rule),
-- or nil
local function decide(found)
  if found.err then return found end
  local page = nil
  if signature ~= '' then
    page = parsed(signature)
    if page.err then return page end
  end
  -- Hamming candidates: every document of every fingerprint within k, nearest first, then
  -- by key; the first without a signature, or that the Hamming rule accepts, wins
  local cands, damaged = {}, nil
  documents(found, function(id, data, d)
    if id == docid then return end
    local key = record_key(data)
    if key then cands[#cands + 1] = {id = id, data = data, d = d, key = key}
    else damaged = damaged or data end
  end)
  -- a damaged candidate fails the decision, as its record's decoding does on LMDB
  if damaged then return damaged_record(damaged) end
  table.sort(cands, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    return before(a.key, b.key)
  end)
  for _, c in ipairs(cands) do
    if not page then return {c.data, c.d, 'hamming', c.id} end
    local stored = redis.call('HGET', sigs, c.id)
    if not stored then return {c.data, c.d, 'hamming', c.id} end
    stored = stored_signature(stored, c.id)
    if stored.err then return stored end
    if rule_decide(page, stored, nil) == 'hamming' then return {c.data, c.d, 'hamming', c.id} end
  end
  -- sentence candidates: the documents holding the page's sentences, each sentence counted
  -- when fewer than guard documents hold it, with the pages of the page's site dropped
  -- through it (reps); the best by (-counted, distance, key)
  -- the fewest shared sentences the rule ever takes (Rule.fewest_shared)
  local fewest = min(R.shared, R.contained)
  if R.runs_same >= 0 then fewest = min(fewest, 1) end
  if not page or #page.s < fewest or #page.s == 0 then return nil end
  local names = {}
  for j, s in ipairs(page.s) do names[j] = sentence_key(s) end
  local postings = redis.call('HMGET', sents, unpack(names))
  local repeated = {}
  if site ~= '' then
    local held = {}
    for j, ids in ipairs(postings) do
      if ids then held[#held + 1] = names[j] .. site end
    end
    if #held > 0 then
      local counts = redis.call('HMGET', reps, unpack(held))
      for j, ids in ipairs(counts) do
        local others = 0  -- the page's own earlier drop does not count against it
        for p = 1, ids and #ids or 0, 16 do
          if sub(ids, p, p + 15) ~= docid then others = others + 1 end
        end
        repeated[sub(held[j], 1, 8)] = others
      end
    end
  end
  local tally, order = {}, {}
  for j, ids in ipairs(postings) do
    if ids and #ids / 16 + (repeated[names[j]] or 0) < R.guard then
      for p = 1, #ids, 16 do
        local id = sub(ids, p, p + 15)
        if id ~= docid then
          if not tally[id] then tally[id] = 0 order[#order + 1] = id end
          tally[id] = tally[id] + 1
        end
      end
    end
  end
  local qh, ql = page.fh, page.fl
  local best = nil
  for _, id in ipairs(order) do
    local counted = tally[id]
    if counted >= fewest then
      local stored = redis.call('HGET', sigs, id)
      -- so few sentences take it only when one is enough: a look at its fingerprint and
      -- shingles sketch before the checksum and the rest (Rule.needs_runs)
      if stored and counted < min(R.shared, R.contained)
        and not packed_takes_one(page, stored) then
        stored = nil
      end
      if stored then
        stored = stored_signature(stored, id)
        if stored.err then return stored end
        local by = rule_decide(page, stored, counted)
        local data = by and redis.call('HGET', docs, id)
        local key = data and record_key(data)
        if data and not key then return damaged_record(data) end
        if data then
          local d = pop(bxor(head(data, 1), qh)) + pop(bxor(head(data, 5), ql))
          local c = {id = id, data = data, d = d, rule = by, counted = counted,
                     key = key, sig = stored}
          if not best or c.counted > best.counted
            or (c.counted == best.counted
              and (c.d < best.d or (c.d == best.d and before(c.key, best.key)))) then
            best = c
          end
        end
      end
    end
  end
  if best then return {best.data, best.d, best.rule, best.id, best.sig} end
  return nil
end

-- count the page (docid, of site) dropped by the sentence rule against the kept signature
-- under each long sentence they share, guard pages of a site at most (Sentences.learn)
local function learn(page_sig, kept)
  if site == '' then return end
  local held = {}
  for _, s in ipairs(kept.s) do held[s] = true end
  for _, s in ipairs(distinct(page_sig)) do
    if held[s] then
      local name = sentence_key(s) .. site
      local ids = redis.call('HGET', reps, name) or ''
      local known = false
      for p = 1, #ids, 16 do
        if sub(ids, p, p + 15) == docid then known = true end
      end
      if not known and #ids / 16 < R.guard then redis.call('HSET', reps, name, ids .. docid) end
    end
  end
end


-- take the document ``gone`` (default: this one) out of the packed ids in field f of hash h
-- (the field deleted when no id is left); true when none is left
local function drop_id(h, f, gone)
  gone = gone or docid
  local ids = redis.call('HGET', h, f) or ''
  local kept = {}
  for p = 1, #ids, 16 do
    local id = sub(ids, p, p + 15)
    if id ~= gone then kept[#kept + 1] = id end
  end
  if #kept > 0 then
    redis.call('HSET', h, f, table.concat(kept))
    return false
  end
  redis.call('HDEL', h, f)
  return true
end

-- -- drop records -----------------------------------------------------------------------------
-- drops: dropped key's id -> the LMDB index's drop record, byte for byte (drops.py: sequence 8,
-- time 8, distance 1, rule 1, fingerprint 8, kept id 16, key length 4, key, JSON, CRC-32 4);
-- dseq: the ids by sequence (a sorted set), the oldest evicted first; dkept: kept id -> the ids
-- dropped against it, concatenated; meta's drops_seq: the last sequence given.

-- x (an integer below 2^53) in n bytes, big-endian
local function be(x, n)
  local b = {}
  for i = n, 1, -1 do
    b[i] = x % 256
    x = floor(x / 256)
  end
  return char(unpack(b))
end

-- remove the drop record of the id dropped; true when there was one
local function forget_drop(dropped)
  local data = redis.call('HGET', drops, dropped)
  if not data then return false end
  redis.call('HDEL', drops, dropped)
  redis.call('ZREM', dseq, dropped)
  drop_id(dkept, sub(data, 27, 42), dropped)
  return true
end
-- remove the records of every key dropped against the document kept
local function forget_kept(kept)
  local ids = redis.call('HGET', dkept, kept)
  if not ids then return end
  for p = 1, #ids, 16 do forget_drop(sub(ids, p, p + 15)) end
end
-- record this page (its record: fingerprint 8, first seen 8, key length 4, key, JSON, CRC 4)
-- as dropped against the document kept at distance d by the rule of code, at the time
-- drop_seen; then evict the oldest records beyond limit
local function record_drop(kept, d, code, limit)
  forget_drop(docid)
  local seq = redis.call('HINCRBY', KEYS[1], 'drops_seq', 1)
  local rec = record
  local body = be(seq, 8) .. drop_seen .. char(d, code) .. sub(rec, 1, 8) .. kept
    .. sub(rec, 17, #rec - 4)
  local c = crc32(body)
  redis.call('HSET', drops, docid, body .. char(c % 256, floor(c / 256) % 256,
    floor(c / 65536) % 256, floor(c / 16777216)))
  redis.call('ZADD', dseq, seq, docid)
  redis.call('HSET', dkept, kept, (redis.call('HGET', dkept, kept) or '') .. docid)
  local excess = redis.call('ZCARD', dseq) - limit
  if excess > 0 then
    for _, id in ipairs(redis.call('ZRANGE', dseq, 0, excess - 1)) do forget_drop(id) end
  end
end
-- a rule's stored code: its place in the rules' names
local function rule_code(name)
  local i = 0
  for r in RULE_NAMES:gmatch('%S+') do
    if r == name then return i end
    i = i + 1
  end
  return redis.error_reply('SIMHASHMODE unknown rule ' .. name)
end

-- the value v into (or out of) table i's bucket f
local function table_add(i, f, v)
  local key = KEYS[T + i]
  local b, at = BK[i], AT[i]
  if b == nil then b, at = redis.call('HGET', key, f), nil end
  if not b then redis.call('HSET', key, f, v) return end
  if at then at = at - 1 else at = position(b, head(v, 1), tail(v, 1)) * w end
  if sub(b, at + 1, at + w) == v then return end
  redis.call('HSET', key, f, sub(b, 1, at) .. v .. sub(b, at + 1))
end
local function table_remove(i, f, v)
  local key = KEYS[T + i]
  if f == F[i] then BK[i] = nil end  -- the probed bucket changes: read it again to add
  local b = redis.call('HGET', key, f)
  if not b then return end
  local at = position(b, head(v, 1), tail(v, 1)) * w
  if sub(b, at + 1, at + w) ~= v then return end
  b = sub(b, 1, at) .. sub(b, at + w + 1)
  if b == '' then redis.call('HDEL', key, f) else redis.call('HSET', key, f, b) end
end

-- detach the document from its old fingerprint (old_fp); the last document's takes it out of
-- the tables
local function unlink(old_fp)
  if not drop_id(fps, old_fp) then return end
  for i = 1, n do table_remove(i, old_value(i)) end
  redis.call('HINCRBY', KEYS[1], 'fingerprints', -1)
end

-- forget the document's signature and its postings (a document without one: nothing)
local function forget_signature()
  local data = redis.call('HGET', sigs, docid)
  if not data then return end
  redis.call('HDEL', sigs, docid)
  local sig = parsed(data)
  if sig.err then return end  -- a damaged signature: verify finds its postings
  for _, s in ipairs(distinct(sig)) do drop_id(sents, sentence_key(s)) end
end
-- keep the page's signature (sealed) for the document, and list it under each of its sentences
-- (its old signature forgotten first, so it is in no posting yet)
local function keep_signature()
  local sealed = signature
  if sealed == '' then return end
  local sig = parsed(sealed)
  if sig.err then return end
  redis.call('HSET', sigs, docid, sealed)
  for _, s in ipairs(distinct(sig)) do
    local name = sentence_key(s)
    local ids = redis.call('HGET', sents, name)
    redis.call('HSET', sents, name, (ids or '') .. docid)
  end
end

-- -- the modes: each answers for the item at hand ------------------------------------------------

local MODES = {}
function MODES.decide()
  local match = decide(probe())
  if match and match.err then return match end
  if match then return {1, match[1], match[2], match[3]} end
  return {0, 0}
end
function MODES.forget() return {0, forget_drop(docid) and 1 or 0} end
-- record_drop: dropping is the kept id, the distance and the rule code
function MODES.drop()
  local kept = sub(dropping, 1, 16)
  if redis.call('HEXISTS', docs, kept) == 0 then return {-2, 0} end
  record_drop(kept, byte(dropping, 17), byte(dropping, 18), max(LIMIT, 1))
  return {0, 1}
end
-- remove, check, insert: refused ({-1, header}) when the document's record is not the one the
-- client read; damage when it is cut short (its header would be misread: as on LMDB, where
-- replacing or removing a document decodes its record first)
local function changed()
  local old = redis.call('HGET', docs, docid)
  if old and not record_key(old) then return damaged_record(old) end
  local held = old and sub(old, 1, 16) or ''
  if held ~= expect then return {-1, held} end
  return nil
end
function MODES.remove()
  local refused = changed()
  if refused then return refused end
  if expect == '' then return {0, 0} end
  redis.call('HDEL', docs, docid)
  unlink(sub(expect, 1, 8))
  forget_signature()
  forget_kept(docid)
  forget_drop(docid)
  return {0, 1}
end
-- store: the record, its signature and postings, its fingerprint's link, and a fingerprint new
-- to the index in the tables
local function store()
  redis.call('HSET', docs, docid, record)
  forget_drop(docid)  -- a key stored now is no longer dropped
  if expect ~= '' then forget_signature() end
  keep_signature()
  if expect ~= '' then
    local old_fp = sub(expect, 1, 8)
    if old_fp == fp then return {0, 0} end
    unlink(old_fp)
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
end
-- read the item's buckets ahead of its insert (no probe read them), each checked whole: a
-- damaged one is refused before anything is written
local function whole_buckets()
  for i = 1, n do
    local b = redis.call('HGET', KEYS[T + i], F[i])
    if b and #b % w ~= 0 then return damaged_bucket(i, b) end
    BK[i] = b
  end
  return nil
end
function MODES.insert()
  local refused = changed() or whole_buckets()
  if refused then return refused end
  return store()
end
function MODES.check()
  local refused = changed()
  if refused then return refused end
  local match = decide(probe())
  if match and match.err then return match end
  if match then
    if match[3] == 'sentences' and match[5] then learn(parsed(signature), match[5]) end
    if LIMIT > 0 then
      local code = rule_code(match[3])
      if type(code) == 'table' then return code end
      record_drop(match[4], match[2], code, LIMIT)
    end
    return {1, match[1], match[2], match[3]}
  end
  return store()
end

local run = MODES[mode]
if not run then return redis.error_reply('SIMHASHMODE unknown mode ' .. mode) end
return run_items(run)
