import type { InsertFlow } from '@stepfold/engine';
import { FLOW_LUA, needLua, takeNeedsLua } from './flow-lua.js';
import { createLua, hint } from './save-lua.js';
import { script } from './script.js';

// A create that takes its first holder in its own script (`InsertFlow`), on one server: the create
// script with, once the id is known free, a check of every need (as acquire checks them), then,
// once the row is written, the take. A need not met returns before anything is written: no
// instance, no hold, no waiter entry. An id taken returns first and takes nothing.

// ARGV from 13 on: now, the take's lease, its holder, its needs' count, then six arguments per need
// (F, index member, scope, key, limit, period '' for a slot). KEYS from 8 on: the counters index,
// the holder's set.
const CHECK = `local now, lease, taker, ntake = ARGV[13], ARGV[14], ARGV[15], tonumber(ARGV[16])
${needLua(16)}
for i = 1, ntake do
  local F, _, _, _, limit, per = need(i)
  prune(F, now)
  if check(F, taker, limit, per, now) then
    if redis.call('EXISTS', F .. ':m') == 1 and empty(F) then redis.call('DEL', F .. ':m') end
    return 4
  end
end
`;

const WRITTEN = `${takeNeedsLua('ntake', 'taker', 9, 8)}
${hint(9)}
return 1`;

/**
 * create with a flow take, on one server. KEYS: the create's seven, the counters index, the
 * holder's set. ARGV: the create's twelve, then the take (see above). Returns 1 when written with
 * the take, 0 when the id exists (nothing taken), 4 when a need is not met (nothing written).
 */
export const CREATE_FLOW = script('create-flow', createLua(FLOW_LUA, CHECK, WRITTEN));

/** The take's arguments after the create's, for its needs given as `needArgs` makes them. */
export function createFlowArgs(
  flow: InsertFlow,
  needArgs: (n: InsertFlow['take']['needs'][number]) => Array<string | number>,
): Array<string | number> {
  const { take } = flow;
  return [flow.now, take.until, take.holder, take.needs.length, ...take.needs.flatMap(needArgs)];
}
