import type { ListOrder, SearchValue, WhereCondition, WhereOps } from '@stepfold/engine';
import { InvalidArgumentError } from 'commander';

// `stepfold list --where`: conditions on search attributes (and the built-ins status and workflow)
// written as `name=value`, `name>=value` and the like, turned into `store.list`'s `where`.

const CONDITION = /^([A-Za-z][A-Za-z0-9_]*)\s*(>=|<=|!=|=|>|<)\s*(.*)$/s;
const OPS = { '=': 'eq', '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The values a written value may stand for. The CLI does not know the attributes' types, so an
 * unquoted `42` is the number 42 or the string "42" (an equality matches either), `true` the
 * boolean or the string; a date (`2026-01-31`, ISO) is its epoch ms (a `time` attribute); a
 * `"quoted"` value is that string only. Ranges take the first.
 */
export function valuesOf(text: string): SearchValue[] {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return [JSON.parse(text) as string];
    } catch {
      throw new InvalidArgumentError(`bad quoted value ${text}`);
    }
  }
  if (text === 'true' || text === 'false') return [text === 'true', text];
  if (text.trim() !== '' && Number.isFinite(Number(text))) return [Number(text), text];
  if (DATE.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return [ms, text];
  }
  return [text];
}

/** Parses one `--where` and adds it to the conditions gathered so far (repeated names combine). */
export function whereOf(
  value: string,
  previous: Record<string, WhereCondition> = {},
): Record<string, WhereCondition> {
  const m = CONDITION.exec(value.trim());
  if (!m || m[2] === '!=')
    throw new InvalidArgumentError('expected name=value, name>value, name>=value, name<value or name<=value');
  const [, name, sign, text] = m as unknown as [string, string, keyof typeof OPS, string];
  const values = valuesOf(text);
  const builtIn = name === 'status' || name === 'workflow';
  if (builtIn && sign !== '=') throw new InvalidArgumentError(`${name} takes = only`);
  const ops: WhereOps = { ...(previous[name] as WhereOps | undefined) };
  if (sign === '=') {
    const wanted = builtIn ? [text] : values;
    ops.in = ops.in ? ops.in.filter((v) => wanted.includes(v)) : wanted;
  } else ops[OPS[sign]] = values[0];
  return { ...previous, [name]: ops };
}

/** Parses `--order-by`: a field (an attribute or `id`), `-field` for descending. */
export function orderOf(value: string): ListOrder {
  const desc = value.startsWith('-');
  const field = desc ? value.slice(1) : value;
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field))
    throw new InvalidArgumentError('expected a field name, -name for descending');
  return { field, desc };
}
