import { FAIR_LUA } from './fair-lua.js';
import {
  CLAIM_TOKEN,
  CLAIM_VERSION,
  CLAIM_WAKE,
  DUE_WORKFLOW,
  FAIR_DUE,
  FAIR_KEY,
  FAIR_KEYS,
  FAIR_KEYS_LANE,
  FAIR_LANE,
  INSTANCE,
} from './keys.js';
import { type Script, script } from './script.js';

// A claim moves the instance out of the head of the due order: its entries in `due` and in its
// lane are re-scored to the claim's expiry, so it is due again exactly when the claim lapses and
// no poll reads past it meanwhile. The wake time it moved from is kept in the instance hash
// (CLAIM_WAKE), with the version it belongs to (CLAIM_VERSION), for release to put back, and whose
// claim it is (CLAIM_TOKEN): release gives back only its caller's. Save writes the true wake time
// itself and drops the three fields. A record of another version was left by a save that did not
// drop it (an older adapter's, in a mixed fleet): the entry's score is then the true wake time again.
//
// `claims` (KEYS[3]) is the older scheme's set (id, claim expiry; the entry left at its wake time).
// Its live claims are honoured: a call that meets one moves the entry to that expiry and takes it
// out of the set, so the set empties as the polls pass; lapsed ones are dropped. With it empty
// (every store written by this version only) a call reads `limit` entries. Such a claim has no
// token (an old worker's): no release ends it, it lapses.

/**
 * Shared head: keys, arguments and `move`, which re-scores an entry in both due indexes (an
 * instance with a fairness key, in its key's sets) and records the claim (its owner `token`, or
 * none for an old-scheme claim met).
 */
const head = (json: boolean) => `${FAIR_LUA}local p = ARGV[5]
local read_due = KEYS[1] == KEYS[2]
local lane = ARGV[7]
local function move(id, from, to, token)
  local inst = p .. '${INSTANCE}' .. id
  local f = redis.call('HMGET', inst, 'version', 'workflow', '${CLAIM_VERSION}', '${FAIR_KEY}'${json ? ", 'json'" : ''})
  if f[1] then
    if f[3] ~= f[1] then redis.call('HSET', inst, '${CLAIM_VERSION}', f[1], '${CLAIM_WAKE}', from) end
    if token then redis.call('HSET', inst, '${CLAIM_TOKEN}', token) else redis.call('HDEL', inst, '${CLAIM_TOKEN}') end
  end
  if f[4] then
    fair_put(p, f[2], f[4], id, to)
    return f[5]
  end
  redis.call('ZADD', KEYS[1], to, id)
  if not read_due then
    redis.call('ZADD', KEYS[2], 'XX', to, id)
  elseif f[2] then
    redis.call('ZADD', p .. '${DUE_WORKFLOW}' .. f[2], 'XX', to, id)
  end
  return f[5]
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
local held_n = redis.call('ZCARD', KEYS[3])
local function held(id) return held_n > 0 and redis.call('ZSCORE', KEYS[3], id) end
local limit = tonumber(ARGV[2])
local taken = {}
local read = 0
`;

/**
 * The range read. `plain(n)`: the earliest `n` due entries of the index read (the instances without
 * a fairness key), moving old-scheme claims it meets to their expiry, as {id, score, ''}. Then the
 * keys with due work (`fair-keys`, or the lane's): none, and `taken` is the plain read; else the
 * groups (the plain one among them) by their turn (see fair-lua.ts), the first `limit` of them
 * each giving its earliest `limit - groups + 1` (no group gives more before the page fills), in
 * the fair order.
 */
const SCAN = `local function plain(n)
  local out = {}
  local extra = math.min(held_n, tonumber(ARGV[4]))
  local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, n + extra)
  for i = 1, #rows, 2 do
    if #out >= n then break end
    read = read + 1
    local id, score = rows[i], rows[i + 1]
    local expiry = held(id)
    if expiry then
      move(id, score, expiry, false)
      redis.call('ZREM', KEYS[3], id)
    else
      out[#out + 1] = {id, score, ''}
    end
  end
  return out
end
local fkeys = p .. (lane == '' and '${FAIR_KEYS}' or '${FAIR_KEYS_LANE}' .. lane)
local heads = redis.call('ZRANGEBYSCORE', fkeys, '-inf', ARGV[1], 'WITHSCORES')
if #heads == 0 then
  taken = plain(limit)
else
  local groups = {}
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, 1)
  if first[1] then groups[1] = {'', fair_turn(p, '', tonumber(first[2]))} end
  for i = 1, #heads, 2 do groups[#groups + 1] = {heads[i], fair_turn(p, heads[i], tonumber(heads[i + 1]))} end
  table.sort(groups, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[1] < b[1]
  end)
  local n = math.min(#groups, limit)
  local each = limit - n + 1
  local entries = {}
  for g = 1, n do
    local key = groups[g][1]
    if key == '' then
      for _, e in ipairs(plain(each)) do entries[#entries + 1] = e end
    else
      local set = p .. (lane == '' and '${FAIR_DUE}' .. key or '${FAIR_LANE}' .. lane .. '#' .. key)
      local rows = redis.call('ZRANGEBYSCORE', set, '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, each)
      for i = 1, #rows, 2 do
        read = read + 1
        entries[#entries + 1] = {rows[i], rows[i + 1], key}
      end
    end
  end
  taken = fair_order(entries, limit, p, ARGV[1], #groups > 1)
end
`;

/**
 * due (listDue). KEYS: the due index read (`due` or a lane), `due`, the old-scheme claims set. ARGV:
 * now (a score bound), limit, claim expiry (a score), most old-scheme claims to step over, prefix,
 * the claim's token, the lane's workflow ('' for every workflow).
 *
 * The fair due order (see SCAN), each taken one moved to the expiry in its due indexes. Returns
 * {entries read, id, …}, in that order.
 */
export const LIST_DUE = script(
  'list-due',
  `${head(false)}${SCAN}local reply = {read}
for _, t in ipairs(taken) do
  move(t[1], t[2], ARGV[3], ARGV[6])
  reply[#reply + 1] = t[1]
end
return reply`,
);

/**
 * claimDue: listDue returning the snapshots. KEYS and ARGV[1..7] as LIST_DUE; ARGV[8..] ids to
 * narrow to (none: the range read as LIST_DUE). A named id is taken if the index holds it due
 * (score at most now: not claimed, or its claim lapsed; one with a fairness key, its key's set,
 * and in a lane only if of its workflow), in the fair order. Returns {entries read, id, json, …}.
 */
export const CLAIM_DUE = script(
  'claim-due',
  `${head(true)}if #ARGV > 7 then
  local now = tonumber(ARGV[1])
  local named = {}
  for i = 8, #ARGV do
    read = read + 1
    local id = ARGV[i]
    local s = redis.call('ZSCORE', KEYS[1], id)
    local key = ''
    if not s then
      local f = redis.call('HMGET', p .. '${INSTANCE}' .. id, '${FAIR_KEY}', 'workflow')
      if f[1] and (lane == '' or f[2] == lane) then
        key = f[1]
        s = redis.call('ZSCORE', p .. '${FAIR_DUE}' .. key, id)
      end
    end
    if s and (ARGV[1] == '+inf' or tonumber(s) <= now) and not held(id) then
      named[#named + 1] = {id, s, key}
    end
  end
  taken = fair_order(named, limit, p, ARGV[1])
else
${SCAN}end
local reply = {read}
for _, t in ipairs(taken) do
  local json = move(t[1], t[2], ARGV[3], ARGV[6])
  reply[#reply + 1] = t[1]
  reply[#reply + 1] = json
end
return reply`,
);

/**
 * release. KEYS: `due`. ARGV: prefix, token, then ids. Puts each id claimed with `token` back at the
 * wake time its claim moved its entries in `due` and its lane from, and drops the claim record;
 * another owner's claim, an old-scheme one and an id not claimed are left as they are.
 */
export const RELEASE_DUE = script(
  'release-due',
  `${FAIR_LUA}local p = ARGV[1]
for i = 3, #ARGV do
  local id = ARGV[i]
  local inst = p .. '${INSTANCE}' .. id
  local f = redis.call('HMGET', inst, 'version', 'workflow', '${CLAIM_VERSION}', '${CLAIM_WAKE}', '${CLAIM_TOKEN}', '${FAIR_KEY}')
  if f[3] and f[5] == ARGV[2] then
    if f[3] == f[1] and f[6] then
      fair_put(p, f[2], f[6], id, f[4])
    elseif f[3] == f[1] then
      redis.call('ZADD', KEYS[1], 'XX', f[4], id)
      redis.call('ZADD', p .. '${DUE_WORKFLOW}' .. f[2], 'XX', f[4], id)
    end
    redis.call('HDEL', inst, '${CLAIM_VERSION}', '${CLAIM_WAKE}', '${CLAIM_TOKEN}')
  end
end
return 0`,
);

/** The due scripts, for the store's script list. */
export const DUE_SCRIPTS: readonly Script[] = [LIST_DUE, CLAIM_DUE, RELEASE_DUE];
