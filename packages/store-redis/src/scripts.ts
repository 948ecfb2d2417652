export type { Script } from './script.js';

import type { Cluster, Redis } from 'ioredis';
import { CREATE_FLOW } from './create-flow.js';
import { DUE_SCRIPTS } from './due-scripts.js';
import { FAIR_LUA } from './fair-lua.js';
import { FLOW_SCRIPTS } from './flow-scripts.js';
import { CLAIM_SENT, DROP_SENT, SEND } from './inbox-scripts.js';
import { FAIR_KEY, INSTANCE, SEARCH_FIELD } from './keys.js';
import { isNoScript } from './map-error.js';
import { SAVE_FLOW } from './save-flow.js';
import { createLua, hint, INDEX_KEYS, SEARCH_ENTRIES, saveLua } from './save-lua.js';
import { type Script, script } from './script.js';
import { STREAM_SCRIPTS } from './stream-scripts.js';

/**
 * create. KEYS: instance, due, all, status, workflow, status-workflow, due-workflow (lane).
 * ARGV: id, json, version, status, workflow, wakeAt ('' for none), fairness key ('' for none),
 * prefix, then the wake hint's payload, publish command and channel, then the search entries
 * ('' for none). Returns 1, or 0 if the id exists.
 */
export const CREATE = script(
  'create',
  createLua(
    '',
    '',
    `${hint(9)}
return 1`,
  ),
);

// A save matching a notice's snapshot (ARGV[14], the digest, not ''): the SHA-1 of the stored JSON
// and each consumed seq's stored event, "\n"-joined in the order given, must be the digest. A seq
// not stored fails it too.
const MATCH = `if ARGV[14] ~= '' then
  local parts = {redis.call('HGET', KEYS[1], 'json')}
  for i = 15, #ARGV do
    local event = redis.call('HGET', KEYS[8], ARGV[i])
    if not event then return {3} end
    parts[#parts + 1] = event
  end
  if redis.sha1hex(table.concat(parts, '\\n')) ~= ARGV[14] then return {3} end
end
`;

// Once written: the consumed seqs (ARGV[15..]) leave the instance's sent hash (KEYS[8]), and an
// emptied hash its sent-due and sent-claims entries (KEYS[9], KEYS[10]).
const CONSUME = `if #ARGV > 14 then
  for i = 15, #ARGV do redis.call('HDEL', KEYS[8], ARGV[i]) end
  if redis.call('EXISTS', KEYS[8]) == 0 then
    redis.call('ZREM', KEYS[9], id)
    redis.call('ZREM', KEYS[10], id)
  end
end
`;

/**
 * save, a compare-and-set on the version that also consumes sent signals and may require a
 * notice's snapshot; a write ends the instance's claim (its due entries get the new wake time, its
 * claim record goes, and so does an old-scheme claim). KEYS: instance, due, status, workflow,
 * status-workflow, due-workflow (the new ones), claims, the instance's sent hash, sent-due,
 * sent-claims. ARGV: id, json, version, status, workflow, wakeAt ('' for none), fairness key ('' for
 * none), expected version, prefix, the wake hint as in create, the search entries ('' for none),
 * the match digest ('' for none), then the seqs to consume. Changed search entries move in their
 * attributes' sets. An instance with a fairness key is indexed in its key's sets (see fair-lua.ts)
 * instead of `due` and the lane.
 * Returns {1} when written, {0} when the id does not exist, {2, stored version} on a conflict,
 * {3} when the stored snapshot or signals are not the ones matched (nothing written).
 */
export const SAVE = script(
  'save',
  saveLua(
    '',
    MATCH,
    `${CONSUME}${hint(10)}
return {1}`,
  ),
);

/**
 * delete, with the signals sent to it; with an expected version, only if that is the stored one.
 * KEYS: instance, due, all, claims, sent hash, sent-due, sent-claims. ARGV: id, prefix, expected
 * version ('' for any). Returns 1 if the instance was removed, 0 if it did not exist, 2 if another
 * version is stored (nothing removed).
 */
export const DELETE = script(
  'delete',
  `${INDEX_KEYS}${FAIR_LUA}${SEARCH_ENTRIES}
local cur = redis.call('HMGET', KEYS[1], 'status', 'workflow', 'version', '${FAIR_KEY}', '${SEARCH_FIELD}')
if cur[1] and ARGV[3] ~= '' and cur[3] ~= ARGV[3] then return 2 end
redis.call('DEL', KEYS[5])
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
if not cur[1] then return 0 end
local id = ARGV[1]
local by_status, by_workflow, by_both, lane = index_keys(ARGV[2], cur[1], cur[2])
redis.call('DEL', KEYS[1])
search_index(ARGV[2], cur[5], false)
if cur[4] then fair_put(ARGV[2], cur[2], cur[4], id, nil) end
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', by_status, id)
redis.call('ZREM', by_workflow, id)
redis.call('ZREM', by_both, id)
redis.call('ZREM', lane, id)
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

/** Every script the store runs, for `setup` to load or for inspection. */
export const SCRIPTS: readonly Script[] = [
  CREATE,
  CREATE_FLOW,
  SAVE,
  SAVE_FLOW,
  DELETE,
  LIST,
  ...DUE_SCRIPTS,
  SEND,
  CLAIM_SENT,
  DROP_SENT,
  ...FLOW_SCRIPTS,
  ...STREAM_SCRIPTS,
];

/** EVALSHA, falling back to EVAL (which also caches the script) when the server lost or never had it. */
export function runScript(
  client: Redis | Cluster,
  s: Script,
  keys: string[],
  args: Array<string | number>,
): Promise<unknown> {
  // A promise chain, not an async function: one promise fewer on every write.
  return client.evalsha(s.sha, keys.length, ...keys, ...args).catch((e: unknown) => {
    if (!isNoScript(e)) throw e;
    return client.eval(s.lua, keys.length, ...keys, ...args);
  });
}
