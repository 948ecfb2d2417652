import type { Condition, Operand } from '../definition/schema.js';

// Turning user data (step ids, handler and signal names, condition literals) into Mermaid node ids
// and label text that the Mermaid parser cannot misread.

/** Characters kept as they are in a label; every other one is written as a `#<code>;` entity. */
const PLAIN = /[A-Za-z0-9 .,:_\-/+=@!?()'*]/;

/** Longest label text shown (user data beyond it is cut with an ellipsis). */
export const MAX_LABEL = 60;

/**
 * Label text safe inside a quoted Mermaid label: quotes, brackets, `<`, `>`, `#`, `%`, `&`, `|`,
 * backticks and any non-ASCII character become numeric entities; control characters become spaces.
 */
export function escapeLabel(text: string, max = MAX_LABEL): string {
  const chars = Array.from(text);
  const shown = chars.length > max ? [...chars.slice(0, max - 1), '\u2026'] : chars;
  let out = '';
  for (const c of shown) {
    const code = c.codePointAt(0)!;
    out += PLAIN.test(c) ? c : code < 0x20 || code === 0x7f ? ' ' : `#${code};`;
  }
  return out;
}

/**
 * An injective encoding of a step id into Mermaid identifier characters: letters and digits stay,
 * every other character (`_` included) becomes `_` and two hex digits, so distinct ids stay distinct.
 */
export function encodeId(id: string): string {
  let out = '';
  for (const c of id) {
    if (/[A-Za-z0-9]/.test(c)) out += c;
    else {
      const code = c.codePointAt(0)!;
      out += code < 0x100 ? `_${code.toString(16).padStart(2, '0')}` : `_u${code.toString(16)}_`;
    }
  }
  return out;
}

/** A duration in ms as a short text: `500ms`, `5s`, `45min`, `48h`, `7d`. */
export function duration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${ms}ms`;
}

function operand(op: Operand): string {
  if (typeof op === 'object' && op !== null && !Array.isArray(op)) return op.var;
  return JSON.stringify(op);
}

/** A condition in short infix form, e.g. `input.amount > 1000 and not exists(input.vip)`. */
export function conditionText(cond: Condition): string {
  const nested = (c: Condition) => {
    const t = conditionText(c);
    return 'and' in c || 'or' in c ? `(${t})` : t;
  };
  if ('var' in cond) return cond.var;
  if ('exists' in cond) return `exists(${cond.exists})`;
  if ('and' in cond) return cond.and.map(nested).join(' and ');
  if ('or' in cond) return cond.or.map(nested).join(' or ');
  if ('!' in cond) return `not ${nested(cond['!'])}`;
  const [op, args] = Object.entries(cond)[0] as [string, [Operand, Operand]];
  return `${operand(args[0])} ${op} ${operand(args[1])}`;
}
