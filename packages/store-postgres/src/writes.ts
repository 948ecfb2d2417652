import type {
  DriverOutcome,
  EncodedSnapshot,
  InsertFlow,
  StoreDriver,
  UpdateCondition,
} from '@stepfold/engine';
import { needsTextColumn, type Row, toRow } from './encode.js';
import { refValues, retried } from './flow.js';
import type { CreateTexts } from './flow-create.js';
import { acquireShape, type FastKind, fastKind, fastValues, saveShape } from './flow-fast.js';
import { errorCode, isUnavailable } from './map-error.js';
import type { Query } from './query.js';
import { createSaveBatcher, type QueuedSave } from './save-batch.js';
import { type SnapshotColumn, saveManyStatement, saveManyValues } from './save-many.js';
import type { storeStatements } from './statements.js';
import { GROUP_COMMIT_CHARS, GROUP_COMMIT_ROWS } from './store-options.js';
import { wakePayload } from './wakes.js';

// JSONB refused the value (NUL or bad escape, or the binary form over 255 MiB): store the text instead.
const JSONB_FALLBACK_CODES = new Set(['22P05', '54000']);

/**
 * The NOTIFY payload of a write, or undefined when it announces nothing. A hand-off sends its
 * snapshot along (if it fits) so the worker that hears it first takes the task with no claim or
 * load, but only a snapshot stored as text: the save that takes it must find exactly that text.
 */
function noticeOf(e: EncodedSnapshot, row: Row): string | undefined {
  if (e.notice === null) return undefined;
  return wakePayload(e.notice, e.workflow, e.id, e.handoff && row.asText ? e.json : undefined, e.busy);
}

/** The save statement's first parameters (`$1`-`$9`): the row, its expected version and its columns. */
const savedValues = (row: Row, expected: number): unknown[] => [
  row.id,
  expected,
  row.version,
  row.status,
  row.workflow,
  row.wakeAt,
  row.definition,
  row.fairKey,
  row.search,
];

/** Whether one statement wrote its row. */
const written = (r: { rowCount: number | null }): boolean => r.rowCount === 1;

/** A conditional update's outcome from whether it wrote. */
const outcomeOf = (ok: boolean): DriverOutcome => (ok ? 'written' : 'failed');

/** A conditional update's outcome from its statement's answer. */
const answered = (r: { rowCount: number | null }): DriverOutcome => outcomeOf(written(r));

/** The store's writes: `insert` and the conditional `update`, alone or in a group commit. */
export function pgWrites(
  query: Query,
  sql: ReturnType<typeof storeStatements>,
  o: {
    table: string;
    channel: string;
    column: SnapshotColumn;
    groupCommit: boolean;
    /**
     * The save statement with flow work (flow.ts), with NOTIFY or without; `At`: with the counters
     * the released holders are on.
     */
    savingFlow: { plain: string; notify: string; plainAt: string; notifyAt: string };
    /** The short save statements for concurrency counters (flow-fast.ts) by kind, with NOTIFY or without. */
    fastFlow: Record<FastKind, { plain: string; notify: string }>;
    /** The create statements with a flow take (flow-create.ts): the short one and the general one. */
    creatingFlow: { fast: CreateTexts; general: CreateTexts };
  },
): Pick<StoreDriver, 'insert' | 'update'> {
  const jsonb = o.column === 'jsonb';
  // Runs a write with the JSON in snapshot_text, or, for a jsonb store, in the JSONB column unless
  // JSONB cannot hold it; `tail` (consumed seqs, match, notice payload) follows the two JSON parameters.
  // Not async: a text row (every row of a text store, the default) is one query and no frame more.
  // `values` is the caller's own array: a text row's parameters are appended to it in place.
  const write = (row: Row, text: string, values: unknown[], tail: unknown[]) => {
    if (row.asText) {
      values.push(null, row.json);
      for (let i = 0; i < tail.length; i++) values.push(tail[i]);
      return query(text, values);
    }
    return query(text, [...values, row.json, null, ...tail]).catch((e: unknown) => {
      const code = errorCode(e);
      if (code === undefined || !JSONB_FALLBACK_CODES.has(code)) throw e;
      return query(text, [...values, null, row.json, ...tail]);
    });
  };

  // One save in a statement of its own: the statement's answer (one row counted when written).
  const saveAlone = ({ row, expected, payload }: QueuedSave, c?: UpdateCondition) => {
    const { consumed, match } = c ?? {};
    const tail: unknown[] = consumed || match ? [consumed ?? []] : [];
    // A text store compares the stored text by digest only; a jsonb store also gives the JSON for
    // rows in the JSONB column (none when JSONB cannot hold it: such a row is stored as text).
    if (match)
      tail.push(
        ...(jsonb
          ? [match.digest, needsTextColumn(match.json) ? null : match.json]
          : [Buffer.from(match.digest, 'hex')]),
      );
    if (payload !== undefined) tail.push(payload);
    const text = sql.save({ consume: !!consumed, match: !!match, notify: payload !== undefined });
    return write(row, text, savedValues(row, expected), tail);
  };
  // The same, true when written, false when its condition failed (a group commit's single saves).
  const saveOne = (q: QueuedSave, c?: UpdateCondition): Promise<boolean> => saveAlone(q, c).then(written);

  // A save with flow work: the take's and the release's parameters follow the snapshot's;
  // retried, whole, where a counter another call created meanwhile fails it (it wrote nothing).
  const saveWithFlow = (
    save: QueuedSave,
    flow: NonNullable<UpdateCondition['flow']>,
  ): Promise<DriverOutcome> => {
    const shape = saveShape(flow);
    if (shape === null) return saveWithAnyFlow(save, flow);
    // Concurrency counters, a holder each way at most: the short statement, or, where it did
    // nothing (see flow-fast.ts), the general one.
    const { row, expected, payload } = save;
    const kind = fastKind(shape);
    const text = payload === undefined ? o.fastFlow[kind].plain : o.fastFlow[kind].notify;
    const tail = fastValues(kind, shape, flow.now);
    if (payload !== undefined) tail.push(payload);
    return retried(() => write(row, text, savedValues(row, expected), tail)).then((r) => {
      const answer = r.rows[0] as { written: boolean; fast: boolean } | undefined;
      if (answer?.written) return { woken: [] };
      return answer?.fast ? 'failed' : saveWithAnyFlow(save, flow);
    });
  };

  // A save with any flow work: the general statement (flow.ts).
  const saveWithAnyFlow = (
    { row, expected, payload }: QueuedSave,
    flow: NonNullable<UpdateCondition['flow']>,
  ): Promise<DriverOutcome> => {
    const needs = flow.take?.needs ?? [];
    const at = flow.counters !== undefined || !flow.release?.length;
    const tail: unknown[] = [
      flow.take?.holder ?? '',
      needs.map((n) => n.scope),
      needs.map((n) => n.key),
      needs.map((n) => n.periodMs ?? 0),
      needs.map((n) => n.limit),
      flow.now,
      flow.take?.until ?? 0,
      flow.release ?? [],
      // Nothing released: the counters are known (none), and the statement reads only the take's.
      ...(at ? refValues(flow.counters ?? []) : []),
      ...(payload === undefined ? [] : [payload]),
    ];
    const kind = payload === undefined ? ('plain' as const) : ('notify' as const);
    const text = o.savingFlow[at ? (`${kind}At` as const) : kind];
    return retried(() => write(row, text, savedValues(row, expected), tail)).then((r) => {
      const answer = r.rows[0] as { written: boolean; refused: boolean; woken: string[] | null } | undefined;
      if (answer?.written) return { woken: answer.woken ?? [] };
      return answer?.refused ? 'refused' : 'failed';
    });
  };

  // A create taking a holder: the short statement for one concurrency need, where it did nothing
  // (see flow-fast.ts) or for any other need the general one; retried, whole, as a save with flow.
  const insertWithFlow = (row: Row, payload: string | undefined, flow: InsertFlow) => {
    const { holder, needs, until } = flow.take;
    const shape = acquireShape(holder, needs, until);
    if (shape === null) return insertWithAnyFlow(row, payload, flow);
    const text = payload === undefined ? o.creatingFlow.fast.plain : o.creatingFlow.fast.notify;
    const values = fastValues('take', shape, flow.now);
    const tail = payload === undefined ? values : [...values, payload];
    return retried(() => write(row, text, savedValues(row, 0), tail)).then((r) => {
      const answer = r.rows[0] as { written: boolean; fast: boolean } | undefined;
      if (answer?.written) return true;
      // Granted but not written: the id is taken.
      return answer?.fast ? false : insertWithAnyFlow(row, payload, flow);
    });
  };
  const insertWithAnyFlow = (
    row: Row,
    payload: string | undefined,
    { take, now }: InsertFlow,
  ): Promise<boolean | 'refused'> => {
    const tail: unknown[] = [
      take.holder,
      take.needs.map((n) => n.scope),
      take.needs.map((n) => n.key),
      take.needs.map((n) => n.periodMs ?? 0),
      take.needs.map((n) => n.limit),
      now,
      take.until,
      [],
      ...refValues([]),
      ...(payload === undefined ? [] : [payload]),
    ];
    const text = payload === undefined ? o.creatingFlow.general.plain : o.creatingFlow.general.notify;
    return retried(() => write(row, text, savedValues(row, 0), tail)).then((r) => {
      const answer = r.rows[0] as { written: boolean; refused: boolean } | undefined;
      if (answer?.written) return true;
      return answer?.refused ? 'refused' : false;
    });
  };

  const SAVE_MANY = saveManyStatement(o.table, o.channel, o.column);
  const batcher = o.groupCommit
    ? createSaveBatcher({
        maxRows: GROUP_COMMIT_ROWS,
        maxChars: GROUP_COMMIT_CHARS,
        one: saveOne,
        async many(saves) {
          const r = await query<{ id: string }>(SAVE_MANY(saves.length), saveManyValues(saves));
          return new Set(r.rows.map((x) => x.id));
        },
        retryAlone: (e) => !isUnavailable(e),
      })
    : null;

  return {
    // Not async: the statement's answer is read in one `then` (a sync throw still rejects).
    insert(encoded, flow) {
      let done: Promise<unknown>;
      try {
        const row = toRow(encoded, jsonb);
        const payload = noticeOf(encoded, row);
        if (flow) return insertWithFlow(row, payload, flow);
        done = write(
          row,
          payload === undefined ? sql.CREATE : sql.CREATE_NOTIFY,
          [
            row.id,
            row.version,
            row.status,
            row.workflow,
            row.wakeAt,
            row.definition,
            row.fairKey,
            row.search,
          ],
          payload === undefined ? [] : [payload],
        );
      } catch (e) {
        return Promise.reject(e);
      }
      return done.then(
        () => true,
        (e: unknown) => {
          if (errorCode(e) === '23505') return false;
          throw e;
        },
      );
    },
    update(encoded, c) {
      const row = toRow(encoded, jsonb);
      const save: QueuedSave = { row, expected: c.expected, payload: noticeOf(encoded, row) };
      if (c.flow) return saveWithFlow(save, c.flow);
      // Alone: a save that consumes or matches (the batch statement knows no inbox), and a jsonb
      // store's rare text-column rows (its batch statement binds JSONB).
      const alone =
        batcher === null || c.consumed !== undefined || c.match !== undefined || row.asText === jsonb;
      // Alone, the statement's answer becomes the outcome in one `then`.
      return alone ? saveAlone(save, c).then(answered) : batcher.write(save).then(outcomeOf);
    },
  };
}
