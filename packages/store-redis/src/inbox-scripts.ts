import { INSTANCE, SENT } from './keys.js';
import { script } from './script.js';

// The inbox of signals runner.send writes: a hash per instance (field seq, value the event JSON),
// a counter for the seqs, `sent-due` (when the polls may claim an instance's signals: the first's
// send time plus a second, or while leased the lease's expiry) and `sent-claims` (the leases of an
// older version, read and emptied, no longer written). Every key shares the
// prefix's hash tag, so a cluster node holds them with the instances.

/**
 * `inbox.send`. KEYS: instance, its sent hash, sent-seq, sent-due. ARGV: id, event JSON, due score, send
 * time, publish command, channel, longest hint with the snapshot (characters), then the accepted
 * definitions (`name@version@hash`). Appends the signal if the instance exists, is not finished and
 * runs on an accepted definition, and publishes `{"at","w","i","s":<snapshot>,"p":[{"n","e"}…]}`
 * with every signal waiting (`"p":true` without the snapshot when that is too long). Returns 1 when
 * appended, else writes nothing and returns the status of an instance finished on an accepted
 * definition, 0 otherwise.
 */
export const SEND = script(
  'send',
  `local cur = redis.call('HMGET', KEYS[1], 'status', 'workflow', 'json')
if not cur[1] then return 0 end
local st = cur[1]
local decoded, snap = pcall(cjson.decode, cur[3])
if not decoded or type(snap.workflow) ~= 'table' then return 0 end
local w = snap.workflow
local key = tostring(w.name) .. '@' .. string.format('%d', tonumber(w.version) or -1) .. '@' .. tostring(w.hash)
local accepted = false
for i = 8, #ARGV do
  if ARGV[i] == key then accepted = true break end
end
if not accepted then return 0 end
if st == 'completed' or st == 'failed' or st == 'cancelled' or st == 'aborted' then return st end
local seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], seq, ARGV[2])
redis.call('ZADD', KEYS[4], 'NX', ARGV[3], ARGV[1])
local all = redis.call('HGETALL', KEYS[2])
local items = {}
for i = 1, #all, 2 do items[#items + 1] = {tonumber(all[i]), all[i], all[i + 1]} end
table.sort(items, function(a, b) return a[1] < b[1] end)
local parts = {}
for i, it in ipairs(items) do parts[i] = '{"n":' .. it[2] .. ',"e":' .. it[3] .. '}' end
local head = '{"at":' .. ARGV[4] .. ',"w":"' .. cur[2] .. '","i":"' .. ARGV[1] .. '"'
local whole = head .. ',"s":' .. cur[3] .. ',"p":[' .. table.concat(parts, ',') .. ']}'
if #whole > tonumber(ARGV[7]) then whole = head .. ',"p":true}' end
redis.pcall(ARGV[5], ARGV[6], whole)
return 1`,
);

/**
 * The inbox's claim (`inbox.claim`). KEYS: sent-due, sent-claims. ARGV: now (a score bound), limit,
 * lease expiry (a score), most old-scheme claims to step over, prefix, then ids to read at once (no
 * lease); without ids, instances whose signals are due, leasing them. Instances gone have their
 * signals deleted. Returns {entries read, {id, snapshot JSON, {seq, event, seq, event, …}}, …}.
 *
 * A lease moves the instance's entry in sent-due to the lease's expiry, as a due claim does: it is
 * out of the range the polls read until the lease lapses, so a poll reads `limit` entries however
 * many are leased. `sent-claims` is the older scheme's set (id, lease expiry, the entry left at its
 * due time): a poll that meets one of its live leases moves the entry to that expiry and takes it
 * out of the set, and reads at most ARGV[4] more entries while any are left.
 */
export const CLAIM_SENT = script(
  'claim-sent',
  `local out = {}
local read = 0
local function add(id)
  local sent_key = ARGV[5] .. '${SENT}' .. id
  local json = redis.call('HGET', ARGV[5] .. '${INSTANCE}' .. id, 'json')
  local waiting = redis.call('HGETALL', sent_key)
  if not json or #waiting == 0 then
    redis.call('DEL', sent_key)
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    return false
  end
  out[#out + 1] = {id, json, waiting}
  return true
end
if #ARGV > 5 then
  for i = 6, #ARGV do
    read = read + 1
    add(ARGV[i])
  end
  return {read, out}
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
local held_n = redis.call('ZCARD', KEYS[2])
local limit = tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit + math.min(held_n, tonumber(ARGV[4])))
for _, id in ipairs(ids) do
  if #out >= limit then break end
  read = read + 1
  local expiry = held_n > 0 and redis.call('ZSCORE', KEYS[2], id)
  if expiry then
    redis.call('ZADD', KEYS[1], expiry, id)
    redis.call('ZREM', KEYS[2], id)
  elseif add(id) then
    redis.call('ZADD', KEYS[1], ARGV[3], id)
  end
end
return {read, out}`,
);

/**
 * `inbox.drop`. KEYS: instance, its sent hash, sent-due, sent-claims. ARGV: id, version, then seqs.
 * Deletes them if the instance is still at that version. Returns 1 if it was, else 0.
 */
export const DROP_SENT = script(
  'drop-sent',
  `if redis.call('HGET', KEYS[1], 'version') ~= ARGV[2] then return 0 end
for i = 3, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
end
return 1`,
);
