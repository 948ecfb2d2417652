import { AslRuntimeError } from './errors.js';
import { type PathScope, readJsonPath } from './json-path.js';
import { compareTimestamps, parseTimestamp } from './timestamps.js';

// A Choice state's rules (JSONPath form): data-test expressions, `And`/`Or`/`Not`, the `…Path`
// forms that compare with another value in the data, and the type tests. A comparison between
// different types is false, as in AWS; a `Variable` that is not there is a `States.Runtime` error,
// except for `IsPresent`.

/** The comparison operators, without their `Path` forms. */
const COMPARISONS = [
  'StringEquals',
  'StringLessThan',
  'StringGreaterThan',
  'StringLessThanEquals',
  'StringGreaterThanEquals',
  'StringMatches',
  'NumericEquals',
  'NumericLessThan',
  'NumericGreaterThan',
  'NumericLessThanEquals',
  'NumericGreaterThanEquals',
  'BooleanEquals',
  'TimestampEquals',
  'TimestampLessThan',
  'TimestampGreaterThan',
  'TimestampLessThanEquals',
  'TimestampGreaterThanEquals',
] as const;

/** The type tests. */
const TESTS = ['IsNull', 'IsPresent', 'IsNumeric', 'IsString', 'IsBoolean', 'IsTimestamp'] as const;

/** Every operator a rule may use, `…Path` forms included (not `StringMatchesPath`: AWS has none). */
export const CHOICE_OPERATORS: ReadonlySet<string> = new Set([
  ...COMPARISONS,
  ...COMPARISONS.filter((c) => c !== 'StringMatches').map((c) => `${c}Path`),
  ...TESTS,
]);

/** The problem with a rule's shape, or undefined when it is one this importer evaluates. */
export function ruleProblem(rule: unknown, top: boolean): { field: string; message: string } | undefined {
  if (rule === null || typeof rule !== 'object' || Array.isArray(rule))
    return { field: '', message: 'a choice rule must be an object' };
  const r = rule as Record<string, unknown>;
  const keys = Object.keys(r).filter((k) => k !== 'Next' && k !== 'Comment' && k !== 'Assign');
  if (top && typeof r['Next'] !== 'string') return { field: 'Next', message: 'a top-level rule needs Next' };
  if ('Condition' in r) return { field: 'Condition', message: 'JSONata conditions are not supported yet' };
  if ('And' in r || 'Or' in r) {
    const op = 'And' in r ? 'And' : 'Or';
    const list = r[op];
    if (!Array.isArray(list) || list.length === 0)
      return { field: op, message: `${op} needs a non-empty list` };
    for (const [i, sub] of list.entries()) {
      const p = ruleProblem(sub, false);
      if (p) return { field: `${op}[${i}]${p.field ? `.${p.field}` : ''}`, message: p.message };
    }
    return undefined;
  }
  if ('Not' in r) {
    const p = ruleProblem(r['Not'], false);
    return p ? { field: `Not${p.field ? `.${p.field}` : ''}`, message: p.message } : undefined;
  }
  if (typeof r['Variable'] !== 'string') return { field: 'Variable', message: 'a rule needs Variable' };
  const ops = keys.filter((k) => k !== 'Variable');
  if (ops.length !== 1)
    return { field: '', message: `a rule needs exactly one operator, found ${ops.join(', ') || 'none'}` };
  if (!CHOICE_OPERATORS.has(ops[0]!))
    return { field: ops[0]!, message: `operator ${ops[0]} is not supported` };
  return undefined;
}

/** Evaluates a (checked) rule against the state's input; throws `States.Runtime` for a missing Variable. */
export function evaluateRule(rule: Record<string, unknown>, scope: PathScope): boolean {
  if (Array.isArray(rule['And']))
    return (rule['And'] as Record<string, unknown>[]).every((r) => evaluateRule(r, scope));
  if (Array.isArray(rule['Or']))
    return (rule['Or'] as Record<string, unknown>[]).some((r) => evaluateRule(r, scope));
  if (rule['Not'] !== undefined) return !evaluateRule(rule['Not'] as Record<string, unknown>, scope);
  const variable = rule['Variable'] as string;
  const op = Object.keys(rule).find((k) => CHOICE_OPERATORS.has(k))!;
  const read = readJsonPath(variable, scope);
  if (op === 'IsPresent') return read.found === (rule[op] === true);
  if (!read.found)
    throw new AslRuntimeError(
      'States.Runtime',
      `Invalid path '${variable}': The choice state's condition path references an invalid value.`,
    );
  const v = read.value;
  if (TESTS.includes(op as (typeof TESTS)[number])) {
    const want = rule[op] === true;
    const is =
      op === 'IsNull'
        ? v === null
        : op === 'IsNumeric'
          ? typeof v === 'number'
          : op === 'IsString'
            ? typeof v === 'string'
            : op === 'IsBoolean'
              ? typeof v === 'boolean'
              : typeof v === 'string' && parseTimestamp(v) !== null;
    return is === want;
  }
  let base = op;
  let other = rule[op];
  if (op.endsWith('Path')) {
    base = op.slice(0, -4);
    const r = readJsonPath(other as string, scope);
    if (!r.found)
      throw new AslRuntimeError(
        'States.Runtime',
        `Invalid path '${String(other)}': The choice state's condition path references an invalid value.`,
      );
    other = r.value;
  }
  return compare(base, v, other);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  if (op.startsWith('String')) {
    if (typeof a !== 'string' || typeof b !== 'string') return false;
    if (op === 'StringMatches') return matches(a, b);
    return order(op.slice(6), a < b ? -1 : a > b ? 1 : 0);
  }
  if (op.startsWith('Numeric')) {
    if (typeof a !== 'number' || typeof b !== 'number') return false;
    return order(op.slice(7), a - b);
  }
  if (op === 'BooleanEquals') return typeof a === 'boolean' && a === b;
  if (op.startsWith('Timestamp')) {
    if (typeof a !== 'string' || typeof b !== 'string') return false;
    const x = parseTimestamp(a);
    const y = parseTimestamp(b);
    if (x === null || y === null) return false;
    return order(op.slice(9), compareTimestamps(x, y));
  }
  return false;
}

function order(rel: string, d: number): boolean {
  switch (rel) {
    case 'Equals':
      return d === 0;
    case 'LessThan':
      return d < 0;
    case 'GreaterThan':
      return d > 0;
    case 'LessThanEquals':
      return d <= 0;
    default:
      return d >= 0;
  }
}

/** `StringMatches`: `*` matches any run of characters, `\*` a literal star. */
function matches(text: string, pattern: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else if (c === '*') re += '[\\s\\S]*';
    else re += escapeRe(c);
  }
  return new RegExp(`${re}$`).test(text);
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
