/**
 * The Redis store's scripts. Each operation is ONE script over all the scopes of a request, so
 * Redis runs it whole before any other command: two instances can never both take the last
 * unit. The rules are those of scope-state.ts (the memory store), line for line.
 *
 * Keys are built inside the scripts from the configured prefix, because a budget's period id
 * depends on the time the script reads (Redis TIME, so every instance shares one clock). That
 * suits a standalone Redis or Sentinel; on a Cluster, a prefix with a hash tag
 * (`{switchyard}:`) puts every key in one slot.
 *
 * Per scope S, under the prefix:
 *   rq:S  zset  request id → admission ms (the request window)
 *   tk:S  zset  request id → admission ms (the token window), tv:S hash id → tokens
 *   fl:S  zset  request id → lease expiry ms (in flight), fv:S hash id → reserved nano-USD
 *   st:S  hash  tokens (sum of tv:S), reserved (sum of fv:S)
 *   sp:S:<period id>  string  spent nano-USD
 * and open:<id> (a request admitted and not settled), settled:<id> (a settlement booked outside
 * its reservation: the idempotency marker of a replay), usage:<YYYY-MM-DD> (a hash of counters
 * per key \x1f team \x1f model \x1f field), and `sentinel` (`fleet|epoch|cut`, see
 * redis-recovery.ts): written when the counters are known whole; its absence means Redis lost
 * them, and then nothing budgeted is admitted and nothing is settled until they are rebuilt.
 */

// biome-ignore lint/complexity/noUselessStringRaw: Lua source: raw, so that a backslash added to a Lua pattern or string reaches Redis as written
export const LUA_PRELUDE = String.raw`
local P = ARGV[1]
local BATCH = 500
local DAY = 86400000
local PERIODS = { 'daily', 'weekly', 'monthly', 'total' }

local function num(x) return tonumber(x) or 0 end
-- Integers as plain digits: tostring() would write 1.7e+12.
local function str(x) return string.format('%.0f', x) end

local function clock(arg)
  local now = tonumber(arg)
  if now then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Days since the epoch to the proleptic Gregorian date (H. Hinnant's civil_from_days).
local function civil(days)
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local function dayId(days)
  local y, m, d = civil(days)
  return string.format('%04d-%02d-%02d', y, m, d)
end

-- Same ids as periods.ts; weeks start on Monday (1970-01-01 was a Thursday).
local function periodId(period, ms)
  local days = math.floor(ms / DAY)
  if period == 'daily' then return 'd' .. dayId(days) end
  if period == 'weekly' then return 'w' .. dayId(days - (days + 3) % 7) end
  if period == 'monthly' then
    local y, m = civil(days)
    return string.format('m%04d-%02d', y, m)
  end
  return 'total'
end

local function keysOf(name)
  return { rq = P .. 'rq:' .. name, tk = P .. 'tk:' .. name, tv = P .. 'tv:' .. name,
           fl = P .. 'fl:' .. name, fv = P .. 'fv:' .. name, st = P .. 'st:' .. name }
end

local function spendKey(name, period, ms) return P .. 'sp:' .. name .. ':' .. periodId(period, ms) end

local function addSpend(name, ms, nano)
  if nano == 0 then return end
  for _, period in ipairs(PERIODS) do redis.call('INCRBY', spendKey(name, period, ms), str(nano)) end
end

local function bump(key, field, delta)
  if delta ~= 0 then redis.call('HINCRBY', key, field, str(delta)) end
end

-- Drops what left the window; charges the reserved cost of leases nobody renewed (their instance died).
local function trim(name, k, now, window)
  local cutoff = str(now - window)
  redis.call('ZREMRANGEBYSCORE', k.rq, '-inf', cutoff)
  while true do
    local old = redis.call('ZRANGEBYSCORE', k.tk, '-inf', cutoff, 'LIMIT', 0, BATCH)
    if #old == 0 then break end
    local values = redis.call('HMGET', k.tv, unpack(old))
    local freed = 0
    for i = 1, #old do freed = freed + num(values[i]) end
    redis.call('HDEL', k.tv, unpack(old))
    redis.call('ZREM', k.tk, unpack(old))
    bump(k.st, 'tokens', -freed)
  end
  while true do
    local dead = redis.call('ZRANGEBYSCORE', k.fl, '-inf', str(now), 'LIMIT', 0, BATCH)
    if #dead == 0 then break end
    local costs = redis.call('HMGET', k.fv, unpack(dead))
    local charged = 0
    for i = 1, #dead do charged = charged + num(costs[i]) end
    redis.call('HDEL', k.fv, unpack(dead))
    redis.call('ZREM', k.fl, unpack(dead))
    bump(k.st, 'reserved', -charged)
    addSpend(name, now, charged)
  end
end

-- The sentinel's epoch and cut (ms; settlements that ended before it are in the rebuilt counters), or nil when absent.
local function sentinel()
  local v = redis.call('GET', P .. 'sentinel')
  if not v then return nil end
  local _, epoch, cut = string.match(v, '^(.*)|([^|]*)|([^|]*)$')
  return epoch or '', tonumber(cut) or 0
end

local function newest(key)
  local e = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #e == 0 then return '' end
  return e[2]
end

local function figures(k, spent)
  return { str(redis.call('ZCARD', k.rq)), newest(k.rq), str(num(redis.call('HGET', k.st, 'tokens'))), newest(k.tk),
           str(redis.call('ZCARD', k.fl)), str(num(redis.call('HGET', k.st, 'reserved'))), str(spent) }
end
`;

/**
 * ARGV: prefix, id, now ('' = Redis TIME), tokens, cost nano, lease ttl, window, open-marker ttl,
 * n, then n × (name, rpm, tpm, concurrency, budget nano, period) with '' for no limit.
 * Returns: admitted (1/0), now, n, n × 7 figures, m, m × (scope index, kind, used, limit, retryAt, final).
 */
export const ADMIT_LUA =
  LUA_PRELUDE +
  // biome-ignore lint/complexity/noUselessStringRaw: Lua source: raw, so that a backslash added to a Lua pattern or string reaches Redis as written
  String.raw`
local id = ARGV[2]
local now = clock(ARGV[3])
local tokens, cost, ttl, window, openTtl, n = num(ARGV[4]), num(ARGV[5]), num(ARGV[6]), num(ARGV[7]), num(ARGV[8]), num(ARGV[9])
local scopes, violations = {}, {}
local epoch = sentinel()
if not epoch then
  -- The counters were lost: nothing budgeted is admitted against an empty count.
  for i = 1, n do
    if ARGV[9 + (i - 1) * 6 + 5] ~= '' then return { 'lost' } end
  end
end

local function refuse(i, kind, used, limit, retryAt, final)
  violations[#violations + 1] = { tostring(i - 1), kind, str(used), str(limit), retryAt and str(retryAt) or '', final and '1' or '0' }
end

-- When need tokens will have left the window (entries expire oldest first).
local function tokensFreedAt(k, need)
  local freed, start = 0, 0
  while true do
    local page = redis.call('ZRANGE', k.tk, start, start + BATCH - 1, 'WITHSCORES')
    if #page == 0 then return nil end
    local ids = {}
    for j = 1, #page, 2 do ids[#ids + 1] = page[j] end
    local values = redis.call('HMGET', k.tv, unpack(ids))
    for j = 1, #ids do
      if ids[j] ~= id then
        freed = freed + num(values[j])
        if freed >= need then return tonumber(page[2 * j]) + window end
      end
    end
    start = start + BATCH
  end
end

for i = 1, n do
  local o = 9 + (i - 1) * 6
  local sc = { name = ARGV[o + 1], rpm = tonumber(ARGV[o + 2]), tpm = tonumber(ARGV[o + 3]),
               concurrency = tonumber(ARGV[o + 4]), budget = tonumber(ARGV[o + 5]), period = ARGV[o + 6] }
  local k = keysOf(sc.name)
  sc.k = k
  trim(sc.name, k, now, window)
  sc.spent = num(redis.call('GET', spendKey(sc.name, sc.period, now)))
  -- A lease this request already holds (re-admission on another target) is not counted twice.
  sc.held = redis.call('ZSCORE', k.fl, id) ~= false
  sc.heldCost = sc.held and num(redis.call('HGET', k.fv, id)) or 0
  if sc.rpm and not sc.held then
    local count = redis.call('ZCARD', k.rq)
    if count + 1 > sc.rpm then
      -- The window fits one more once the entries up to this one have expired.
      local oldest = redis.call('ZRANGE', k.rq, count - sc.rpm, count - sc.rpm, 'WITHSCORES')
      if #oldest > 0 then refuse(i, 'requests', count, sc.rpm, tonumber(oldest[2]) + window, false)
      else refuse(i, 'requests', count, sc.rpm, nil, true) end
    end
  end
  if sc.tpm then
    local sum = num(redis.call('HGET', k.st, 'tokens'))
    local over = sum + tokens - num(redis.call('HGET', k.tv, id)) - sc.tpm
    if over > 0 then
      if tokens > sc.tpm then refuse(i, 'tokens', sum, sc.tpm, nil, true)
      else refuse(i, 'tokens', sum, sc.tpm, tokensFreedAt(k, over), false) end
    end
  end
  if sc.concurrency and not sc.held then
    local inFlight = redis.call('ZCARD', k.fl)
    if inFlight + 1 > sc.concurrency then refuse(i, 'concurrency', inFlight, sc.concurrency, nil, sc.concurrency == 0) end
  end
  if sc.budget then
    local used = sc.spent + num(redis.call('HGET', k.st, 'reserved'))
    -- Final: even with every reservation in flight given back, this request would not fit.
    if sc.spent + cost > sc.budget then refuse(i, 'budget', used, sc.budget, nil, true)
    elseif used - sc.heldCost + cost > sc.budget then refuse(i, 'budget', used, sc.budget, nil, false) end
  end
  scopes[i] = sc
end

local admitted = #violations == 0
if admitted then
  for _, sc in ipairs(scopes) do
    local k = sc.k
    if not sc.held then redis.call('ZADD', k.rq, str(now), id) end
    redis.call('ZADD', k.fl, str(now + ttl), id)
    redis.call('HSET', k.fv, id, str(cost))
    bump(k.st, 'reserved', cost - sc.heldCost)
    local old = redis.call('HGET', k.tv, id)
    if not old then redis.call('ZADD', k.tk, str(now), id) end
    redis.call('HSET', k.tv, id, str(tokens))
    bump(k.st, 'tokens', tokens - num(old))
  end
  redis.call('SET', P .. 'open:' .. id, '1', 'PX', str(openTtl))
end

local out = { admitted and '1' or '0', str(now), tostring(n) }
for _, sc in ipairs(scopes) do
  for _, v in ipairs(figures(sc.k, sc.spent)) do out[#out + 1] = v end
end
out[#out + 1] = tostring(#violations)
for _, v in ipairs(violations) do
  for _, x in ipairs(v) do out[#out + 1] = x end
end
out[#out + 1] = epoch or ''
return out
`;

/**
 * ARGV: prefix, id, at, reserved (1/0), final (1/0), tokens, cost nano ('' = unknown), n, n names,
 * then key ('' = no usage record), team, model, input, cached input, cache write, output,
 * then mark (1: a request's settlement, booked once by its id; 0: a release), the lease's epoch,
 * ended at (ms), settled-marker ttl.
 * Returns 1, 0 when the request was settled already, -1 when the counters were lost (no sentinel).
 */
export const SETTLE_LUA =
  LUA_PRELUDE +
  String.raw`
local id, at = ARGV[2], num(ARGV[3])
local reserved, final = ARGV[4] == '1', ARGV[5] == '1'
local tokens, cost, n = num(ARGV[6]), tonumber(ARGV[7]), num(ARGV[8])
local o = 8 + n
local mark, leaseEpoch, endedAt, markTtl = ARGV[o + 8] == '1', ARGV[o + 9], num(ARGV[o + 10]), num(ARGV[o + 11])
local epoch, cut = sentinel()
if not epoch then return -1 end
-- Its reservation is in these counters (admitted since they were last rebuilt).
local sameEpoch = reserved and leaseEpoch == epoch
if final then
  if sameEpoch then
    if redis.call('DEL', P .. 'open:' .. id) == 0 then return 0 end
  elseif mark then
    -- No reservation to consume: the marker makes a replay (a settle that timed out but ran) a no-op.
    if not redis.call('SET', P .. 'settled:' .. id, '1', 'NX', 'PX', str(markTtl)) then return 0 end
    redis.call('DEL', P .. 'open:' .. id)
  end
end
-- Ended before the counters were rebuilt from the ledger: its row is in them already.
local covered = not sameEpoch and endedAt < cut
for i = 1, n do
  local name = ARGV[8 + i]
  local k = keysOf(name)
  local heldCost = num(redis.call('HGET', k.fv, id))
  local hadLease = redis.call('ZREM', k.fl, id) == 1
  if hadLease then
    redis.call('HDEL', k.fv, id)
    bump(k.st, 'reserved', -heldCost)
  end
  local old = redis.call('HGET', k.tv, id)
  if old then
    redis.call('HSET', k.tv, id, str(tokens))
    bump(k.st, 'tokens', tokens - num(old))
  end
  -- A reserved lease that is gone expired and was charged its worst case already (unless the counters were lost since).
  if cost and not covered and (hadLease or not sameEpoch) then addSpend(name, at, cost) end
end
local key = ARGV[o + 1]
if final and key ~= '' and not covered then
  local h = P .. 'usage:' .. dayId(math.floor(at / DAY))
  local f = key .. '\31' .. ARGV[o + 2] .. '\31' .. ARGV[o + 3] .. '\31'
  redis.call('HINCRBY', h, f .. 'requests', 1)
  redis.call('HINCRBY', h, f .. 'input', ARGV[o + 4])
  redis.call('HINCRBY', h, f .. 'cachedInput', ARGV[o + 5])
  redis.call('HINCRBY', h, f .. 'cacheWrite', ARGV[o + 6])
  redis.call('HINCRBY', h, f .. 'output', ARGV[o + 7])
  if cost then
    redis.call('HINCRBY', h, f .. 'costNano', str(cost))
    redis.call('HINCRBY', h, f .. 'priced', 1)
  end
end
return 1
`;

/** ARGV: prefix, now ('' = TIME), lease ttl, open-marker ttl, m, then m × (id, n, n names). */
export const RENEW_LUA =
  LUA_PRELUDE +
  // biome-ignore lint/complexity/noUselessStringRaw: Lua source: raw, so that a backslash added to a Lua pattern or string reaches Redis as written
  String.raw`
local now, ttl, openTtl, m = clock(ARGV[2]), num(ARGV[3]), num(ARGV[4]), num(ARGV[5])
local o = 5
for _ = 1, m do
  local id, n = ARGV[o + 1], num(ARGV[o + 2])
  o = o + 2
  -- XX: a lease that expired and was charged stays gone.
  for j = 1, n do redis.call('ZADD', P .. 'fl:' .. ARGV[o + j], 'XX', str(now + ttl), id) end
  o = o + n
  redis.call('PEXPIRE', P .. 'open:' .. id, str(openTtl))
end
return 1
`;

/** ARGV: prefix, now ('' = TIME), window, n, then n × (name, period). Returns now, n × 7 figures. */
export const FIGURES_LUA =
  LUA_PRELUDE +
  // biome-ignore lint/complexity/noUselessStringRaw: Lua source: raw, so that a backslash added to a Lua pattern or string reaches Redis as written
  String.raw`
local now, window, n = clock(ARGV[2]), num(ARGV[3]), num(ARGV[4])
local out = { str(now) }
for i = 1, n do
  local name, period = ARGV[3 + 2 * i], ARGV[4 + 2 * i]
  local k = keysOf(name)
  trim(name, k, now, window)
  for _, v in ipairs(figures(k, num(redis.call('GET', spendKey(name, period, now))))) do out[#out + 1] = v end
end
return out
`;

/**
 * ARGV: prefix, sentinel value, n, then n × (spend key suffix `<scope>:<period id>`, nano).
 * Raises each counter to the ledger's figure (never lowers it: a counter that survived is not
 * undercut) and writes the sentinel last, in one step. Returns 0 when another instance did it first.
 */
export const REBUILD_LUA = `
local P = ARGV[1]
if redis.call('EXISTS', P .. 'sentinel') == 1 then return 0 end
local n = tonumber(ARGV[3])
for i = 1, n do
  local key = P .. 'sp:' .. ARGV[2 + 2 * i]
  local nano = tonumber(ARGV[3 + 2 * i])
  if nano > (tonumber(redis.call('GET', key)) or 0) then redis.call('SET', key, string.format('%.0f', nano)) end
end
redis.call('SET', P .. 'sentinel', ARGV[2])
return 1
`;
