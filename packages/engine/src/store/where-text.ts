import { ValidationError } from '../errors.js';
import type { SearchValue } from '../search.js';
import type { ListOrder, WhereCondition, WhereOps } from './list-query.js';

// `list`'s `where` written as text, as the CLI's `--where` and the inspector's filter bar take it:
// `customerId=42`, `total>=100`, `status=waiting`. One parser, so both read a condition alike.

const CONDITION = /^([A-Za-z][A-Za-z0-9_]*)\s*(>=|<=|!=|=|>|<)\s*(.*)$/s;
const OPS = { '=': 'eq', '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;

const invalid = (path: string, message: string) =>
  new ValidationError('INVALID_QUERY', `invalid condition: ${message}`, [{ path, message }]);

/**
 * The values a written value may stand for. Text does not say an attribute's type, so an unquoted
 * `42` is the number 42 or the string "42" (an equality matches either), `true` the boolean or
 * the string; a date (`2026-01-31`, ISO) is its epoch ms (a `time` attribute) or the string; a
 * `"quoted"` value is that string only. Ranges take the first.
 */
export function whereValues(text: string): SearchValue[] {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return [JSON.parse(text) as string];
    } catch {
      throw invalid('value', `bad quoted value ${text}`);
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

/**
 * Adds one written condition (`name=value`, `name>value`, `>=`, `<`, `<=`) to `previous`; conditions
 * on one name combine (all must hold). `INVALID_QUERY` for text that is not one.
 *
 * @example
 * const where = ['customerId=42', 'total>=100'].reduce((w, c) => addWhere(c, w), {});
 * await store.list({ where, limit: 20 });
 */
export function addWhere(
  condition: string,
  previous: Readonly<Record<string, WhereCondition>> = {},
): Record<string, WhereCondition> {
  const m = CONDITION.exec(condition.trim());
  if (!m || m[2] === '!=')
    throw invalid(
      'where',
      `${JSON.stringify(condition)}: expected name=value, name>value, name>=value, name<value or name<=value`,
    );
  const [, name, sign, text] = m as unknown as [string, string, keyof typeof OPS, string];
  const values = whereValues(text);
  const builtIn = name === 'status' || name === 'workflow';
  if (builtIn && sign !== '=') throw invalid(`where.${name}`, `${name} takes = only`);
  const ops: WhereOps = { ...(previous[name] as WhereOps | undefined) };
  if (sign === '=') {
    const wanted = builtIn ? [text] : values;
    ops.in = ops.in ? ops.in.filter((v) => wanted.includes(v)) : wanted;
  } else ops[OPS[sign]] = values[0];
  return { ...previous, [name]: ops };
}

/** Written conditions (each as {@link addWhere} reads one) as `list`'s `where`. */
export function parseWhere(conditions: readonly string[]): Record<string, WhereCondition> {
  return conditions.reduce<Record<string, WhereCondition>>((w, c) => addWhere(c, w), {});
}

/** A written order: a field (an attribute or `id`), `-field` for descending. `INVALID_QUERY` otherwise. */
export function parseListOrder(text: string): ListOrder {
  const desc = text.startsWith('-');
  const field = desc ? text.slice(1) : text;
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field))
    throw invalid('orderBy', `${JSON.stringify(text)}: expected a field name, -name for descending`);
  return { field, desc };
}
