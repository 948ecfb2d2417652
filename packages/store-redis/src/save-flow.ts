import type { UpdateCondition } from '@stepfold/engine';
import { FLOW_LUA, needLua, releaseHolderSetsLua, takeNeedsLua } from './flow-lua.js';
import { hint, saveLua } from './save-lua.js';
import { script } from './script.js';

// A save with flow work (`UpdateCondition.flow`), on one server: the save script with, once the
// version holds, a check of the take (counted after the release, which comes first), then, once
// the row is written, the release and the take, in the one script. A take whose needs are not met
// returns before anything is written (no waiter entry either).

// ARGV from 15 on: now, the take's lease, its holder ('' for no take), its needs' count, six
// arguments per need (F, index member, scope, key, limit, period '' for a slot), then the holders
// released. KEYS from 11 on: the counters index, the take's holder set ('' key unused without a
// take), then each released holder's set.
const CHECK = `local now, lease, taker, ntake = ARGV[15], ARGV[16], ARGV[17], tonumber(ARGV[18])
local released = {}
for i = 19 + 6 * ntake, #ARGV do released[#released + 1] = ARGV[i] end
${needLua(18)}
for i = 1, ntake do
  local F, _, _, _, limit, per = need(i)
  prune(F, now)
  if check(F, taker, limit, per, now) then
    -- Full unless the release frees it: the released holders' unlapsed slots no longer count.
    local freed = 0
    if not per then
      for _, h in ipairs(released) do
        if redis.call('ZSCORE', F .. ':h', h) then freed = freed + 1 end
      end
    end
    local held = redis.call('ZCOUNT', F .. ':h', '(' .. now, '+inf')
    if freed == 0 or held - freed >= limit then
      if redis.call('EXISTS', F .. ':m') == 1 and empty(F) then redis.call('DEL', F .. ':m') end
      return {4}
    end
  end
end
`;

const WRITTEN = `local out = {1}
${releaseHolderSetsLua(13, 'released', 11)}
${takeNeedsLua('ntake', 'taker', 12, 11)}
${hint(10)}
return out`;

/**
 * save with flow work, on one server. KEYS: the save's ten, the counters index, the take's holder
 * set, each released holder's set. ARGV: the save's fourteen (no match digest), then the flow work
 * (see above). Returns {1, holder, instance, since, ...} (the waiters the release woke) when
 * written, {0}, {2, stored version} as the save does, or {4} when the take's needs are not met
 * (nothing written).
 */
export const SAVE_FLOW = script('save-flow', saveLua(FLOW_LUA, CHECK, WRITTEN));

/** The flow work's arguments after the save's, for a take's needs given as `needArgs` makes them. */
export function saveFlowArgs(
  flow: NonNullable<UpdateCondition['flow']>,
  needArgs: (n: NonNullable<typeof flow.take>['needs'][number]) => Array<string | number>,
): Array<string | number> {
  const take = flow.take;
  return [
    flow.now,
    take?.until ?? 0,
    take?.holder ?? '',
    take?.needs.length ?? 0,
    ...(take?.needs.flatMap(needArgs) ?? []),
    ...(flow.release ?? []),
  ];
}
