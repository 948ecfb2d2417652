import { type Script, script } from './script.js';

// The flow scripts. A counter F (a scope, key and period, see flow.ts) is four Redis keys sharing
// one hash tag: F:h (sorted set, holder -> lease expiry: a concurrency counter's slots), F:s
// (sorted set, holder -> start time: a rate counter's starts), F:w (sorted set, holder -> since: the
// waiters) and F:m (hash: member, the counter's entry in the index; scope, key, limit, period, and
// i:<holder> -> a waiter's instance). F:m exists exactly while the counter holds or waits on
// anything: the scripts delete it when the counter empties.
//
// A rate keeps its starts of the last two periods, not only those of the window at the caller's
// `now`: a caller whose `now` lags (it read its clock before a later caller's script ran) must
// still count every start of its own window. Only the window's starts are counted and listed, and
// F:m outlives the last start by two periods.
//
// On one server a call is one script over every key it touches. On a Cluster each F is in its own
// slot, so the client runs the per-key scripts (ACQUIRE_ONE, GIVE_BACK, RELEASE_ONE, RENEW_ONE,
// READ_ONE) one key at a time.

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

const period = (v: string) => `(${v} ~= '' and tonumber(${v}) or nil)`;

/**
 * acquire, on one server. KEYS: the holder's index, the counters index, then F:h F:s F:w F:m of
 * each need. ARGV: holder, instance, now, lease, then per need F, index member, scope, key, limit,
 * period ('' for a slot). Returns {1}, or {0, need's place (1-based), until, count}.
 */
export const ACQUIRE = script(
  'flow-acquire',
  `${FLOW_LUA}
local holder, instance, now, lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local n = (#ARGV - 4) / 6
local function need(i)
  local b = 4 + (i - 1) * 6
  return ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], tonumber(ARGV[b + 5]), ${period('ARGV[b + 6]')}
end
for i = 1, n do
  local F, member, scope, key, limit, per = need(i)
  prune(F, now)
  local denied = check(F, holder, limit, per, now)
  if denied then
    meta(F, member, scope, key, limit, per)
    wait(F, holder, instance, now)
    redis.call('SADD', KEYS[1], F)
    redis.call('ZADD', KEYS[2], 0, member)
    return {0, i, denied[1], denied[2]}
  end
end
for i = 1, n do
  local F, member, scope, key, limit, per = need(i)
  meta(F, member, scope, key, limit, per)
  take(F, holder, limit, per, now, lease)
  redis.call('SADD', KEYS[1], F)
  redis.call('ZADD', KEYS[2], 0, member)
end
return {1}`,
);

/**
 * release, on one server. KEYS: the counters index, then each holder's index. ARGV: now, then the
 * holders. Returns the waiters to wake, {holder, instance, since, ...}.
 */
export const RELEASE = script(
  'flow-release',
  `${FLOW_LUA}
local now = ARGV[1]
local holders = {}
for i = 2, #ARGV do holders[#holders + 1] = ARGV[i] end
local seen, out = {}, {}
for i = 2, #KEYS do
  for _, F in ipairs(redis.call('SMEMBERS', KEYS[i])) do
    if not seen[F] then
      seen[F] = true
      local gone = release(F, holders, now, out)
      if gone then redis.call('ZREM', KEYS[1], gone) end
    end
  end
  redis.call('DEL', KEYS[i])
end
return out`,
);

/** renew, on one server. KEYS: each holder's index. ARGV: lease, then the holders (in KEYS' order). */
export const RENEW = script(
  'flow-renew',
  `${FLOW_LUA}
local lease = ARGV[1]
for i = 1, #KEYS do
  for _, F in ipairs(redis.call('SMEMBERS', KEYS[i])) do renew(F, {ARGV[i + 1]}, lease) end
end
return 1`,
);

/**
 * A page of list, on one server. KEYS: the counters index. ARGV: now, the first member bound for
 * ZRANGEBYLEX, the last ('+' for none), how many members to read, the flow prefix. Returns
 * {last member read or '', state, state, ...} (see state above); emptied counters leave the index
 * (a rate's with starts of the last two periods only stays in it, to be deleted by a later list).
 */
export const LIST_FLOW = script(
  'flow-list',
  `${FLOW_LUA}
local now = ARGV[1]
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {#members == tonumber(ARGV[4]) and members[#members] or ''}
for _, member in ipairs(members) do
  local F = ARGV[5] .. '{' .. redis.sha1hex(member) .. '}'
  local s = state(F, now)
  if s then out[#out + 1] = s
  elseif redis.call('EXISTS', F .. ':m') == 0 then redis.call('ZREM', KEYS[1], member) end
end
return out`,
);

/**
 * acquire of one need, on a Cluster. KEYS: F:h F:s F:w F:m. ARGV: holder, instance, now, lease,
 * F, index member, scope, key, limit, period ('' for a slot). Returns {1, what the holder had (''
 * for nothing), 1 if the counter was empty}, or {0, until, count, 1 if the counter was empty} (the
 * waiter recorded).
 */
export const ACQUIRE_ONE = script(
  'flow-acquire-one',
  `${FLOW_LUA}
local holder, instance, now, lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local F, member, scope, key, limit, per = ARGV[5], ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9]), ${period('ARGV[10]')}
prune(F, now)
local denied = check(F, holder, limit, per, now)
local created = meta(F, member, scope, key, limit, per)
if denied then
  wait(F, holder, instance, now)
  return {0, denied[1], denied[2], created}
end
return {1, take(F, holder, limit, per, now, lease), created}`,
);

/**
 * Gives back what ACQUIRE_ONE took, on a Cluster. KEYS: F:h F:s F:w F:m. ARGV: holder, F, 's' or
 * 'h' (the sorted set it took in), what the holder had before ('' for nothing). Returns 1 when the
 * counter emptied.
 */
export const GIVE_BACK = script(
  'flow-give-back',
  `${FLOW_LUA}
local holder, F, z, prior = ARGV[1], ARGV[2], ARGV[2] .. ':' .. ARGV[3], ARGV[4]
if prior == '' then redis.call('ZREM', z, holder) else redis.call('ZADD', z, prior, holder) end
if empty(F) then
  redis.call('DEL', F .. ':m')
  return 1
end
return 0`,
);

/**
 * release on one key, on a Cluster. KEYS: F:h F:s F:w F:m. ARGV: now, F, then the holders.
 * Returns {index member when the counter emptied or '', holder, instance, since, ...}.
 */
export const RELEASE_ONE = script(
  'flow-release-one',
  `${FLOW_LUA}
local holders = {}
for i = 3, #ARGV do holders[#holders + 1] = ARGV[i] end
local out = {''}
local gone = release(ARGV[2], holders, ARGV[1], out)
if gone then out[1] = gone end
return out`,
);

/** renew on one key, on a Cluster. KEYS: F:h F:s F:w F:m. ARGV: lease, F, then the holders. */
export const RENEW_ONE = script(
  'flow-renew-one',
  `${FLOW_LUA}
local holders = {}
for i = 3, #ARGV do holders[#holders + 1] = ARGV[i] end
renew(ARGV[2], holders, ARGV[1])
return 1`,
);

/** What list shows of one key, on a Cluster. KEYS: F:h F:s F:w F:m. ARGV: now, F. Returns a state or false. */
export const READ_ONE = script(
  'flow-read-one',
  `${FLOW_LUA}
return state(ARGV[2], ARGV[1])`,
);

/** Every flow script, for `setup` to load. */
export const FLOW_SCRIPTS: readonly Script[] = [
  ACQUIRE,
  RELEASE,
  RENEW,
  LIST_FLOW,
  ACQUIRE_ONE,
  GIVE_BACK,
  RELEASE_ONE,
  RENEW_ONE,
  READ_ONE,
];
