import { FAIR_LUA } from './fair-lua.js';
import {
  CLAIM_TOKEN,
  CLAIM_VERSION,
  CLAIM_WAKE,
  DUE_WORKFLOW,
  FAIR_KEY,
  SEARCH,
  SEARCH_FIELD,
  STATUS,
  STATUS_WORKFLOW,
  WORKFLOW,
} from './keys.js';

// The Lua the create, save and delete scripts share, and the create's and the save's bodies, which
// the create and the save with flow work (create-flow.ts, save-flow.ts) run too.

// The old index keys of an instance are known only inside the script (from its stored status and
// workflow), so the scripts build them from the prefix with the same segments as keys.ts. They share
// the prefix's hash tag with the declared keys, so a cluster node holds them too.
export const INDEX_KEYS = `
local function index_keys(p, status, workflow)
  return p .. '${STATUS}' .. status, p .. '${WORKFLOW}' .. workflow,
    p .. '${STATUS_WORKFLOW}' .. status .. '#' .. workflow, p .. '${DUE_WORKFLOW}' .. workflow
end`;

// Search attributes (see search-entries.ts): an instance's `sa` field lists its entries, each
// the name of its attribute's sorted set and its member there. \3 ends an entry, \2 its name.
export const SEARCH_ENTRIES = `
local function search_index(p, field, add)
  if not field or field == '' then return end
  for entry in string.gmatch(field, '[^\\3]+') do
    local at = string.find(entry, '\\2', 1, true)
    local set, member = p .. '${SEARCH}' .. string.sub(entry, 1, at - 1), string.sub(entry, at + 1)
    if add then redis.call('ZADD', set, 0, member) else redis.call('ZREM', set, member) end
  end
end`;

/**
 * The wake hint: ARGV[n] the payload ('' when the write announces nothing, so such a write pays one
 * comparison), ARGV[n+1] PUBLISH or SPUBLISH, ARGV[n+2] the channel. pcall: the write is done by
 * now, and a publish that fails (SPUBLISH before Redis 7) must not turn it into an error.
 */
export const hint = (n: number) =>
  `if ARGV[${n}] ~= '' then redis.pcall(ARGV[${n + 1}], ARGV[${n + 2}], ARGV[${n}]) end`;

/**
 * The create script's Lua: `functions` defined first, `check` run once the id is known free (it
 * may return, nothing written yet), `written` run after the row and its indexes are written (it
 * publishes the hint and returns the script's answer). KEYS and ARGV: see `CREATE` (scripts.ts).
 */
export function createLua(functions: string, check: string, written: string): string {
  return `${FAIR_LUA}${SEARCH_ENTRIES}${functions}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
${check}redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', ARGV[3], 'status', ARGV[4], 'workflow', ARGV[5])
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[1], '${SEARCH_FIELD}', ARGV[12])
  search_index(ARGV[8], ARGV[12], true)
end
redis.call('ZADD', KEYS[3], 0, ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('ZADD', KEYS[5], 0, ARGV[1])
redis.call('ZADD', KEYS[6], 0, ARGV[1])
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[1], '${FAIR_KEY}', ARGV[7])
  if ARGV[6] ~= '' then fair_put(ARGV[8], ARGV[5], ARGV[7], ARGV[1], ARGV[6]) end
elseif ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
  redis.call('ZADD', KEYS[7], ARGV[6], ARGV[1])
end
${written}`;
}

/**
 * The save script's Lua: `functions` defined first, `check` run once the version holds (it may
 * return, nothing written yet), `written` run after the row and its indexes are written (it returns
 * the script's answer).
 */
export function saveLua(functions: string, check: string, written: string): string {
  return `${INDEX_KEYS}${FAIR_LUA}${SEARCH_ENTRIES}${functions}
local cur = redis.call('HMGET', KEYS[1], 'version', 'status', 'workflow', '${CLAIM_VERSION}', '${FAIR_KEY}', '${SEARCH_FIELD}')
if not cur[1] then return {0} end
if cur[1] ~= ARGV[8] then return {2, cur[1]} end
${check}local id = ARGV[1]
if cur[2] ~= ARGV[4] or cur[3] ~= ARGV[5] then
  local old_status, old_workflow, old_both, old_lane = index_keys(ARGV[9], cur[2], cur[3])
  if cur[2] ~= ARGV[4] then
    redis.call('ZREM', old_status, id)
    redis.call('ZADD', KEYS[3], 0, id)
  end
  if cur[3] ~= ARGV[5] then
    redis.call('ZREM', old_workflow, id)
    redis.call('ZADD', KEYS[4], 0, id)
    redis.call('ZREM', old_lane, id)
  end
  redis.call('ZREM', old_both, id)
  redis.call('ZADD', KEYS[5], 0, id)
end
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', ARGV[3], 'status', ARGV[4], 'workflow', ARGV[5])
if (cur[6] or '') ~= ARGV[13] then
  search_index(ARGV[9], cur[6], false)
  search_index(ARGV[9], ARGV[13], true)
  if ARGV[13] == '' then redis.call('HDEL', KEYS[1], '${SEARCH_FIELD}')
  else redis.call('HSET', KEYS[1], '${SEARCH_FIELD}', ARGV[13]) end
end
if cur[4] then redis.call('HDEL', KEYS[1], '${CLAIM_VERSION}', '${CLAIM_WAKE}', '${CLAIM_TOKEN}') end
local key = ARGV[7]
if cur[5] and (cur[5] ~= key or cur[3] ~= ARGV[5]) then fair_put(ARGV[9], cur[3], cur[5], id, nil) end
if key ~= '' then
  if cur[5] ~= key then redis.call('HSET', KEYS[1], '${FAIR_KEY}', key) end
  if not cur[5] then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[6], id)
  end
  fair_put(ARGV[9], ARGV[5], key, id, ARGV[6] ~= '' and ARGV[6] or nil)
else
  if cur[5] then redis.call('HDEL', KEYS[1], '${FAIR_KEY}') end
  if ARGV[6] == '' then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[6], id)
  else
    redis.call('ZADD', KEYS[2], ARGV[6], id)
    redis.call('ZADD', KEYS[6], ARGV[6], id)
  end
end
redis.call('ZREM', KEYS[7], id)
${written}`;
}
