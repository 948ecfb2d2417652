// The flow scripts' Lua, shared by flow-scripts.ts and the save with flow work (save-flow.ts).
// A counter F (a scope, key and period, see flow.ts) is four Redis keys sharing one hash tag:
// F:h (sorted set, holder -> lease expiry: a concurrency counter's slots), F:s (sorted set,
// holder -> start time: a rate counter's starts), F:w (sorted set, holder -> since: the waiters)
// and F:m (hash: member, the counter's entry in the index; scope, key, limit, period, and
// i:<holder> -> a waiter's instance). F:m exists exactly while the counter holds or waits on
// anything: the scripts delete it when the counter empties.
//
// A rate keeps its starts of the last two periods, not only those of the window at the caller's
// `now`: a caller whose `now` lags (it read its clock before a later caller's script ran) must
// still count every start of its own window. Only the window's starts are counted and listed, and
// F:m outlives the last start by two periods.

// Times are integers (the kit checks them). `now` and `lease` are passed as the caller's text,
// written as they came: Lua would print a number past 14 digits inexactly.
/** The flow scripts' shared functions (the save with flow work runs them too). */
export const FLOW_LUA = `
local function prune(F, now)
  redis.call('ZREMRANGEBYSCORE', F .. ':h', '-inf', now)
  local period = redis.call('HGET', F .. ':m', 'period')
  if period then redis.call('ZREMRANGEBYSCORE', F .. ':s', '-inf', tonumber(now) - 2 * tonumber(period)) end
end
local function empty(F)
  return redis.call('ZCARD', F .. ':h') + redis.call('ZCARD', F .. ':s') + redis.call('ZCARD', F .. ':w') == 0
end
-- nil when holder may take the need, else {until, count}: until is when the entry that must end
-- for one more to fit ends (the earliest when exactly full).
local function check(F, holder, limit, period, nows)
  local now = tonumber(nows)
  local z, low, shift = F .. ':h', '(' .. nows, 0
  if period then z, low, shift = F .. ':s', '(' .. (now - period), period end
  local n = redis.call('ZCOUNT', z, low, '+inf')
  if n < limit then return nil end
  local mine = redis.call('ZSCORE', z, holder)
  if mine and tonumber(mine) + shift > now then return nil end
  local at = redis.call('ZRANGEBYSCORE', z, low, '+inf', 'WITHSCORES', 'LIMIT', n - limit, 1)
  return {tonumber(at[2]) + shift, n}
end
-- Records the counter's names and the need's limit; 1 when F:m was created (the counter was empty).
local function meta(F, member, scope, key, limit, period)
  local created = redis.call('EXISTS', F .. ':m') == 0 and 1 or 0
  redis.call('HSET', F .. ':m', 'member', member, 'scope', scope, 'key', key, 'limit', limit)
  if period then redis.call('HSET', F .. ':m', 'period', period) end
  return created
end
local function wait(F, holder, instance, now)
  if not redis.call('ZSCORE', F .. ':w', holder) then
    redis.call('ZADD', F .. ':w', now, holder)
    redis.call('HSET', F .. ':m', 'i:' .. holder, instance)
  end
end
-- Takes the need; returns what the holder had before ('' for nothing), for a give-back.
local function take(F, holder, limit, period, now, lease)
  local prior
  if period then
    prior = redis.call('ZSCORE', F .. ':s', holder)
    if not (prior and tonumber(prior) > tonumber(now) - period) then
      redis.call('ZADD', F .. ':s', now, holder)
      -- Two periods never hold more than twice the limit.
      redis.call('ZREMRANGEBYRANK', F .. ':s', 0, -2 * limit - 1)
    end
  else
    prior = redis.call('ZSCORE', F .. ':h', holder)
    redis.call('ZADD', F .. ':h', lease, holder)
  end
  redis.call('ZREM', F .. ':w', holder)
  redis.call('HDEL', F .. ':m', 'i:' .. holder)
  return prior or ''
end
-- Ends the holders' slots and waits on F; appends the waiters to wake {holder, instance, since}
-- to out; returns the counter's index member when it emptied (F:m deleted), else false.
local function release(F, holders, now, out)
  local freed = 0
  for _, h in ipairs(holders) do
    freed = freed + redis.call('ZREM', F .. ':h', h)
    if redis.call('ZREM', F .. ':w', h) == 1 then redis.call('HDEL', F .. ':m', 'i:' .. h) end
  end
  prune(F, now)
  -- As many as it freed, no more than are free now.
  local free = tonumber(redis.call('HGET', F .. ':m', 'limit') or '0') - redis.call('ZCARD', F .. ':h')
  if free < freed then freed = free end
  if freed > 0 then
    local ws = redis.call('ZRANGE', F .. ':w', 0, freed - 1, 'WITHSCORES')
    for i = 1, #ws, 2 do
      out[#out + 1] = ws[i]
      out[#out + 1] = redis.call('HGET', F .. ':m', 'i:' .. ws[i])
      out[#out + 1] = ws[i + 1]
    end
  end
  if empty(F) then
    local member = redis.call('HGET', F .. ':m', 'member')
    redis.call('DEL', F .. ':m')
    return member or false
  end
  return false
end
local function renew(F, holders, lease)
  for _, h in ipairs(holders) do redis.call('ZADD', F .. ':h', 'XX', lease, h) end
end
-- What list shows of F: {scope, key, limit, period, {holder, until, ...}, {holder, instance, since, ...}},
-- or false when nothing is held in the window or waited on (F:m is deleted when the counter emptied).
local function state(F, now)
  prune(F, now)
  if empty(F) then
    redis.call('DEL', F .. ':m')
    return false
  end
  local m = redis.call('HMGET', F .. ':m', 'scope', 'key', 'limit', 'period')
  local holders = {}
  local period = m[4] and tonumber(m[4])
  if period then
    -- Only the starts of the window at now (the older ones are kept for lagging callers).
    local s = redis.call('ZRANGEBYSCORE', F .. ':s', '(' .. (tonumber(now) - period), '+inf', 'WITHSCORES')
    for i = 1, #s, 2 do holders[#holders + 1] = s[i]; holders[#holders + 1] = tostring(tonumber(s[i + 1]) + period) end
  else
    holders = redis.call('ZRANGE', F .. ':h', 0, -1, 'WITHSCORES')
  end
  if #holders == 0 and redis.call('ZCARD', F .. ':w') == 0 then return false end
  local waiting = {}
  local w = redis.call('ZRANGE', F .. ':w', 0, -1, 'WITHSCORES')
  for i = 1, #w, 2 do
    waiting[#waiting + 1] = w[i]
    waiting[#waiting + 1] = redis.call('HGET', F .. ':m', 'i:' .. w[i]) or ''
    waiting[#waiting + 1] = w[i + 1]
  end
  return {m[1] or '', m[2] or '', m[3] or '0', m[4] or '', holders, waiting}
end
`;

/** Lua of a need's period from ARGV text `v`: a number, or nil ('') for a slot. */
export const periodLua = (v: string) => `(${v} ~= '' and tonumber(${v}) or nil)`;

/**
 * Lua of `need(i)`: the i-th need's F, index member, scope, key, limit and period (nil for a slot),
 * from the six ARGV after `base + 6 * (i - 1)`.
 */
export const needLua = (base: number) => `local function need(i)
  local b = ${base} + (i - 1) * 6
  return ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], tonumber(ARGV[b + 5]), ${periodLua('ARGV[b + 6]')}
end`;

/**
 * Lua that takes needs 1 to `count` (as `need` reads them) for `holder` at `now` until `lease`,
 * adding each counter to the holder's set KEYS[holderSet] and its member to the counters index
 * KEYS[index]. `count` and `holder` are Lua expressions.
 */
export const takeNeedsLua = (
  count: string,
  holder: string,
  holderSet: number,
  index: number,
) => `for i = 1, ${count} do
  local F, member, scope, key, limit, per = need(i)
  meta(F, member, scope, key, limit, per)
  take(F, ${holder}, limit, per, now, lease)
  redis.call('SADD', KEYS[${holderSet}], F)
  redis.call('ZADD', KEYS[${index}], 0, member)
end`;

/**
 * Lua that releases `holders` (a Lua list) at `now` on every counter in the holder sets KEYS[first]
 * on, deleting each set, appends the waiters to wake to `out`, and takes the counters that emptied
 * out of the counters index KEYS[index].
 */
export const releaseHolderSetsLua = (first: number, holders: string, index: number) => `do
  local seen = {}
  for i = ${first}, #KEYS do
    for _, F in ipairs(redis.call('SMEMBERS', KEYS[i])) do
      if not seen[F] then
        seen[F] = true
        local gone = release(F, ${holders}, now, out)
        if gone then redis.call('ZREM', KEYS[${index}], gone) end
      end
    end
    redis.call('DEL', KEYS[i])
  end
end`;
