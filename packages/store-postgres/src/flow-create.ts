import { savingFlowStatement } from './flow.js';
import { fastFlowStatement } from './flow-fast.js';
import type { TableNames } from './setup.js';
import { CREATED_COLUMNS } from './statements.js';

// A create that takes its first attempt's flow holder in the same statement (`CreateOptions.flow`):
// the save statements with flow work (flow-fast.ts's short `take`, flow.ts's general one), with the
// instance's INSERT where they have the conditional UPDATE. Each of them gates its write on its own
// verdict (`… AND <granted> RETURNING 1`) and its counter writes on that write, so the INSERT takes
// the same place: written only when the take is granted, and, on an id taken (ON CONFLICT DO
// NOTHING), the counters untouched. Their parameters stay those of a save: `$1`-`$11` the row as
// the save binds it (`$2`, a save's expected version, is 0 for a create), the flow work from `$12`.

/** What stands in for the save's UPDATE while the save statements are made: replaced by the INSERT. */
const MARK = 'UPDATE stepfold_create_mark SET mark = 1 WHERE true';

/** The INSERT of the row (the save's parameters), written only where `granted` holds and the id is free. */
const insertRow = (table: string, granted: string) =>
  `INSERT INTO ${table} (${CREATED_COLUMNS})
        SELECT $1::text, $3::bigint, $4::text, $5::text, $6::bigint, $7::text, $8::text, $9::jsonb, $10::jsonb, $11::text
        WHERE $2::bigint = 0 AND ${granted}
        ON CONFLICT (id) DO NOTHING RETURNING 1`;

/** `statement` (a save statement made with {@link MARK}) with the INSERT of the row instead of the UPDATE. */
function inserting(statement: string, table: string): string {
  const head = `w AS (${MARK} AND `;
  const at = statement.indexOf(head);
  const end = at < 0 ? -1 : statement.indexOf(' RETURNING 1)', at);
  // The save statements' shape changed: a create with flow work would write what it should not.
  if (end < 0) throw new Error('flow-create: the save statement has no gated write to replace');
  const granted = statement.slice(at + head.length, end);
  return `${statement.slice(0, at)}w AS (${insertRow(table, granted)})${statement.slice(end + ' RETURNING 1)'.length)}`;
}

/** A create statement with NOTIFY (`notify`) and without (`plain`). */
export interface CreateTexts {
  plain: string;
  notify: string;
}

/**
 * The create statements with flow work: `fast`, the short `take` (answers `written`, `fast`), and
 * `general`, the general save statement with the counters named (answers `written`, `refused`,
 * `woken`: nothing released, none).
 */
export function creatingFlowStatements(
  names: TableNames,
  channel: string,
): { fast: CreateTexts; general: CreateTexts } {
  const t = names.qualified;
  return {
    fast: {
      plain: inserting(fastFlowStatement(names, 'take', MARK, null), t),
      notify: inserting(fastFlowStatement(names, 'take', MARK, channel), t),
    },
    general: {
      plain: inserting(savingFlowStatement(names, MARK, null, true), t),
      notify: inserting(savingFlowStatement(names, MARK, channel, true), t),
    },
  };
}
