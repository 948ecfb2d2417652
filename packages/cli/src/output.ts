import { isPayloadRef } from '@stepfold/engine';
import { errorCodeOf } from './exit-codes.js';
import { compactJson, describeRef } from './payload-view.js';

/** Where a command writes: human text, or (with `--json`) one JSON document on stdout and nothing else. */
export interface Output {
  readonly json: boolean;
  /** A line for people (progress, tables); dropped under `--json`. */
  line(text?: string): void;
  /** The command's result: `human()` is printed normally, `data` as JSON under `--json`. */
  result(data: unknown, human: () => string | readonly string[]): void;
}

/** The output of a command run with or without `--json`. */
export function createOutput(json: boolean): Output {
  return {
    json,
    line(text = '') {
      if (!json) process.stdout.write(`${text}\n`);
    },
    result(data, human) {
      if (json) {
        process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
        return;
      }
      const text = human();
      const lines = typeof text === 'string' ? [text] : text;
      if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    },
  };
}

/**
 * Reports a failure: always `error CODE: message` on stderr; under `--json` also
 * `{ "error": { code, message, exitCode } }` on stdout, so a script reading stdout sees why.
 */
export function printError(error: unknown, exitCode: number, json: boolean): void {
  const code = errorCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error ${code}: ${message}\n`);
  if (json) {
    const issues = (error as { issues?: unknown }).issues;
    const body = { code, message, exitCode, ...(Array.isArray(issues) && issues.length ? { issues } : {}) };
    process.stdout.write(`${JSON.stringify({ error: body }, null, 2)}\n`);
  }
}

/** A time as ISO 8601 (epoch ms in, `-` for none). */
export function isoTime(ms: number | null | undefined): string {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : '-';
}

/** Rows as aligned columns (the header row first). */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * A value as compact JSON for a table cell or a one-line summary, cut at `max` characters; payload
 * references print as `‹payload …›`, and a value that is one is never cut (it is one short line).
 */
export function brief(value: unknown, max = 80): string {
  if (isPayloadRef(value)) return describeRef(value);
  const text = compactJson(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
