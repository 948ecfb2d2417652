import { pathIssues, readPath } from './data-path.js';
import type { Condition, Operand } from './step-fields.js';

const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='] as const;

function isVar(v: unknown): v is { var: string } {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && 'var' in v
  );
}

function operandIssues(op: unknown, at: string, out: Array<{ path: string; message: string }>): void {
  if (op === null || ['string', 'number', 'boolean'].includes(typeof op)) return;
  if (Array.isArray(op)) {
    for (const [i, v] of op.entries()) {
      if (v !== null && !['string', 'number', 'boolean'].includes(typeof v)) {
        out.push({ path: `${at}.${i}`, message: 'list operands hold only literals' });
      }
    }
    return;
  }
  if (isVar(op) && typeof op.var === 'string') {
    for (const m of pathIssues(op.var)) out.push({ path: at, message: m });
    return;
  }
  out.push({ path: at, message: 'operand must be a literal, a list of literals or { var: path }' });
}

/** Every problem with a condition, so definitions can be rejected with all of them at once. */
export function conditionIssues(cond: unknown, at: string): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  const walk = (c: unknown, p: string) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) {
      out.push({ path: p, message: 'condition must be an object with one operator' });
      return;
    }
    const keys = Object.keys(c);
    if (keys.length !== 1) {
      out.push({ path: p, message: `condition must have exactly one operator, found ${keys.length}` });
      return;
    }
    const op = keys[0]!;
    const arg = (c as Record<string, unknown>)[op];
    if (op === 'var' || op === 'exists') {
      if (typeof arg !== 'string') out.push({ path: `${p}.${op}`, message: 'expects a path string' });
      else for (const m of pathIssues(arg)) out.push({ path: `${p}.${op}`, message: m });
    } else if (op === 'and' || op === 'or') {
      if (!Array.isArray(arg) || arg.length === 0)
        out.push({ path: `${p}.${op}`, message: 'expects a non-empty list' });
      else arg.forEach((x, i) => walk(x, `${p}.${op}.${i}`));
    } else if (op === '!') {
      walk(arg, `${p}.!`);
    } else if ((COMPARISONS as readonly string[]).includes(op) || op === 'in') {
      if (!Array.isArray(arg) || arg.length !== 2)
        out.push({ path: `${p}.${op}`, message: 'expects two operands' });
      else arg.forEach((x, i) => operandIssues(x, `${p}.${op}.${i}`, out));
    } else {
      out.push({ path: p, message: `unknown operator "${op}"` });
    }
  };
  walk(cond, at);
  return out;
}

/** The data paths a (validated) condition reads, each with where it is written. */
export function conditionPaths(cond: unknown, at: string): Array<{ path: string; at: string }> {
  if (typeof cond !== 'object' || cond === null) return [];
  const [op, arg] = Object.entries(cond)[0] ?? [];
  if (op === undefined) return [];
  if ((op === 'var' || op === 'exists') && typeof arg === 'string') return [{ path: arg, at: `${at}.${op}` }];
  if (op === 'and' || op === 'or')
    return Array.isArray(arg) ? arg.flatMap((c, i) => conditionPaths(c, `${at}.${op}.${i}`)) : [];
  if (op === '!') return conditionPaths(arg, `${at}.!`);
  if (!Array.isArray(arg)) return [];
  return arg.flatMap((o, i) =>
    isVar(o) && typeof o.var === 'string' ? [{ path: o.var, at: `${at}.${op}.${i}` }] : [],
  );
}

function value(op: Operand, data: unknown): unknown {
  return isVar(op) ? readPath(data, op.var) : op;
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}

function compare(a: unknown, b: unknown): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

/** Evaluates a validated condition against `{ input, outputs }`; comparisons across types are false. */
export function evaluateCondition(cond: Condition, data: unknown): boolean {
  let op = '';
  // The one key of a validated condition, without the arrays Object.entries builds.
  for (const k in cond) {
    op = k;
    break;
  }
  const arg = (cond as Record<string, unknown>)[op];
  switch (op) {
    case 'var':
      return truthy(readPath(data, arg as string));
    case 'exists':
      return readPath(data, arg as string) !== undefined;
    case 'and':
      return (arg as Condition[]).every((c) => evaluateCondition(c, data));
    case 'or':
      return (arg as Condition[]).some((c) => evaluateCondition(c, data));
    case '!':
      return !evaluateCondition(arg as Condition, data);
  }
  const [l, r] = arg as [Operand, Operand];
  const a = value(l, data);
  const b = value(r, data);
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case 'in':
      return Array.isArray(b)
        ? b.includes(a)
        : typeof b === 'string' && typeof a === 'string' && b.includes(a);
  }
  const d = compare(a, b);
  if (d === null) return false;
  return op === '<' ? d < 0 : op === '<=' ? d <= 0 : op === '>' ? d > 0 : d >= 0;
}
