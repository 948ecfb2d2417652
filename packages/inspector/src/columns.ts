import { type ErrorInfo, readPath, type Snapshot } from '@stepfold/engine';

/**
 * A column the host adds to the instance list: a `label` and a dotted `path` into the instance's
 * `input` or `output` (`input.customer.id`, `output.total`). A missing value shows as an empty cell.
 */
export interface InspectorColumn {
  /** The column's heading. */
  label: string;
  /** Where the value is: `input.<field>…` or `output.<field>…` (own properties only). */
  path: string;
}

/** Longest cell text shown; the full value is in the cell's title. */
const MAX_CELL = 80;

/** Checks the host's columns once, at `createInspector`, so a typo fails at start-up, not as empty cells. */
export function checkColumns(columns: readonly InspectorColumn[] | undefined): readonly InspectorColumn[] {
  for (const col of columns ?? []) {
    if (typeof col?.label !== 'string' || col.label.trim() === '') {
      throw new TypeError('createInspector: every column needs a label');
    }
    if (typeof col.path !== 'string' || !/^(input|output)(\.[^.]+)*$/.test(col.path)) {
      throw new TypeError(
        `createInspector: column ${JSON.stringify(col.label)} has path ${JSON.stringify(col.path)}; it must be input.<field>… or output.<field>…`,
      );
    }
  }
  return columns ?? [];
}

/** The value at a column's path, or undefined when any part is missing (the engine's own path reader). */
export function columnValue(s: Snapshot, path: string): unknown {
  return readPath({ input: s.input, output: s.output }, path);
}

/** A value as one line of cell text ('' when missing): strings as they are, anything else as JSON. */
export function cellText(v: unknown): { text: string; full: string } {
  if (v === undefined || v === null) return { text: '', full: '' };
  const full = typeof v === 'string' ? v : JSON.stringify(v);
  return { text: full.length > MAX_CELL ? `${full.slice(0, MAX_CELL - 1)}…` : full, full };
}

/**
 * The error an operator wants first: the instance's own, else the step error that happened last
 * (of a step that did not recover), else a compensation error.
 */
export function lastError(s: Snapshot): ErrorInfo | undefined {
  if (s.error) return s.error;
  let found: { at: number; error: ErrorInfo } | undefined;
  for (const [id, st] of Object.entries(s.steps)) {
    // A step that went on to complete recovered from its error: not what needs a look.
    const error = st.status === 'completed' ? st.compensation?.error : (st.error ?? st.compensation?.error);
    if (!error) continue;
    const at = st.finishedAt ?? st.startedAt;
    if (!found || at >= found.at) found = { at, error: { ...error, step: error.step ?? id } };
  }
  return found?.error ?? s.compensationError;
}
