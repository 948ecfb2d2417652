import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { INSTANCE, STATUS, STATUS_WORKFLOW, WORKFLOW } from './keys.js';
import { isNoScript } from './map-error.js';

/** A Lua script with its SHA1, run by EVALSHA and loaded by EVAL when the server answers NOSCRIPT. */
export interface Script {
  name: string;
  lua: string;
  sha: string;
}

function script(name: string, lua: string): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

// The old index keys of an instance are known only inside the script (from its stored status and
// workflow), so the scripts build them from the prefix with the same segments as keys.ts.
const INDEX_KEYS = `
local function index_keys(p, status, workflow)
  return p .. '${STATUS}' .. status, p .. '${WORKFLOW}' .. workflow,
    p .. '${STATUS_WORKFLOW}' .. status .. '#' .. workflow
end`;

/**
 * create. KEYS: instance, due, all, status, workflow, status-workflow.
 * ARGV: id, json, version, status, workflow, wakeAt ('' for none). Returns 1, or 0 if the id exists.
 */
export const CREATE = script(
  'create',
  `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', ARGV[3], 'status', ARGV[4], 'workflow', ARGV[5])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('ZADD', KEYS[5], 0, ARGV[1])
redis.call('ZADD', KEYS[6], 0, ARGV[1])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1]) end
return 1`,
);

/**
 * save, a compare-and-set on the version. KEYS: instance, due, status, workflow, status-workflow
 * (the new ones). ARGV: id, json, version, status, workflow, wakeAt ('' for none), expected version,
 * prefix. Returns {1} when written, {0} when the id does not exist, {2, stored version} on a conflict.
 */
export const SAVE = script(
  'save',
  `${INDEX_KEYS}
local cur = redis.call('HMGET', KEYS[1], 'version', 'status', 'workflow')
if not cur[1] then return {0} end
if cur[1] ~= ARGV[7] then return {2, cur[1]} end
local id = ARGV[1]
if cur[2] ~= ARGV[4] or cur[3] ~= ARGV[5] then
  local old_status, old_workflow, old_both = index_keys(ARGV[8], cur[2], cur[3])
  if cur[2] ~= ARGV[4] then
    redis.call('ZREM', old_status, id)
    redis.call('ZADD', KEYS[3], 0, id)
  end
  if cur[3] ~= ARGV[5] then
    redis.call('ZREM', old_workflow, id)
    redis.call('ZADD', KEYS[4], 0, id)
  end
  redis.call('ZREM', old_both, id)
  redis.call('ZADD', KEYS[5], 0, id)
end
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', ARGV[3], 'status', ARGV[4], 'workflow', ARGV[5])
if ARGV[6] == '' then redis.call('ZREM', KEYS[2], id) else redis.call('ZADD', KEYS[2], ARGV[6], id) end
return {1}`,
);

/** delete. KEYS: instance, due, all. ARGV: id, prefix. Returns 1 if the instance existed, else 0. */
export const DELETE = script(
  'delete',
  `${INDEX_KEYS}
local cur = redis.call('HMGET', KEYS[1], 'status', 'workflow')
if not cur[1] then return 0 end
local id = ARGV[1]
local by_status, by_workflow, by_both = index_keys(ARGV[2], cur[1], cur[2])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', by_status, id)
redis.call('ZREM', by_workflow, id)
redis.call('ZREM', by_both, id)
return 1`,
);

/**
 * One page of an id index with the snapshots, read atomically. KEYS: index. ARGV: cursor ('' for the
 * first page), rows to read (the page size plus one, which tells whether another page exists),
 * prefix. Returns {id, json, id, json, ...}.
 */
export const LIST = script(
  'list',
  `local min = '-'
if ARGV[1] ~= '' then min = '(' .. ARGV[1] end
local ids = redis.call('ZRANGEBYLEX', KEYS[1], min, '+', 'LIMIT', 0, ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', ARGV[3] .. '${INSTANCE}' .. id, 'json')
end
return out`,
);

/** Every script the store runs (create, save, delete, list), for `setup` to load or for inspection. */
export const SCRIPTS: readonly Script[] = [CREATE, SAVE, DELETE, LIST];

/** EVALSHA, falling back to EVAL (which also caches the script) when the server lost or never had it. */
export async function runScript(
  client: Redis | Cluster,
  s: Script,
  keys: string[],
  args: Array<string | number>,
): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (e) {
    if (!isNoScript(e)) throw e;
    return await client.eval(s.lua, keys.length, ...keys, ...args);
  }
}
