import { DEFINITION_KINDS } from '../definition/kinds/index.js';
import { createFlow } from './flow.js';
import type { KindSet } from './kind-table.js';
import { REDUCER_KINDS } from './kinds/index.js';
import type { RuleTable, StepRules } from './kinds/step-rules.js';

// Turns the `kinds` a caller passes into the table a reduction runs with. Tables are memos of
// their sets, so passing the same sets again finds the same table; nothing here is a registry.

/** The core kinds' table: what a reduction without `kinds` runs with. */
export const CORE_TABLE: RuleTable = tableOf([]);

const bySets = new WeakMap<readonly KindSet[], RuleTable>();
const bySet = new WeakMap<KindSet, RuleTable>();

function tableOf(sets: readonly KindSet[]): RuleTable {
  const rules: Record<string, StepRules<never>> = { ...(REDUCER_KINDS as Record<string, StepRules<never>>) };
  let limits: RuleTable['limits'];
  let search: RuleTable['search'];
  for (const set of sets) {
    Object.assign(rules, set.rules);
    limits = set.limits ?? limits;
    search = set.search ?? search;
  }
  return { rules, flow: createFlow(DEFINITION_KINDS, rules), limits, search };
}

/**
 * The table of the core kinds plus `sets` (a later set's row wins over an earlier one's). The same
 * array, or a list of one set seen before, finds its table without building it again.
 */
export function kindTable(sets: readonly KindSet[] | undefined): RuleTable {
  if (sets === undefined || sets.length === 0) return CORE_TABLE;
  let table = bySets.get(sets);
  if (table) return table;
  if (sets.length === 1) {
    table = bySet.get(sets[0]!);
    if (!table) {
      table = tableOf(sets);
      bySet.set(sets[0]!, table);
    }
  } else table = tableOf(sets);
  bySets.set(sets, table);
  return table;
}
