import { FLOW_LUA, needLua, periodLua, releaseHolderSetsLua, takeNeedsLua } from './flow-lua.js';
import { type Script, script } from './script.js';

// The flow scripts, on one server and per key on a Cluster (their shared Lua: flow-lua.ts).
// On one server a call is one script over every key it touches. On a Cluster each F is in its own
// slot, so the client runs the per-key scripts (ACQUIRE_ONE, GIVE_BACK, RELEASE_ONE, RENEW_ONE,
// READ_ONE) one key at a time.

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
${needLua(4)}
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
${takeNeedsLua('n', 'holder', 1, 2)}
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
local out = {}
${releaseHolderSetsLua(2, 'holders', 1)}
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
local F, member, scope, key, limit, per = ARGV[5], ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9]), ${periodLua('ARGV[10]')}
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
