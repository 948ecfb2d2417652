import { describe, expect, it } from 'vitest';
import { addWhere, isStepfoldError, parseListOrder, parseWhere, whereValues } from '../src/index.js';

// Conditions written as text (the CLI's --where, the inspector's filter bar), read by one parser.

describe('written list conditions', () => {
  it('an unquoted value stands for each kind it can be; a quoted one for the string; a date for its ms', () => {
    expect(whereValues('42')).toEqual([42, '42']);
    expect(whereValues('"42"')).toEqual(['42']);
    expect(whereValues('true')).toEqual([true, 'true']);
    expect(whereValues('c-7')).toEqual(['c-7']);
    expect(whereValues('2026-01-31')).toEqual([Date.parse('2026-01-31'), '2026-01-31']);
  });

  it('combines conditions on one name, keeps status and workflow as strings, reads an order', () => {
    expect(parseWhere(['total>=100', 'total<200', 'status=waiting', 'customerId=42'])).toEqual({
      total: { gte: 100, lt: 200 },
      status: { in: ['waiting'] },
      customerId: { in: [42, '42'] },
    });
    // Two equalities on one name keep what both allow.
    expect(parseWhere(['tier=gold', 'tier="gold"'])).toEqual({ tier: { in: ['gold'] } });
    expect(parseListOrder('-total')).toEqual({ field: 'total', desc: true });
    expect(parseListOrder('id')).toEqual({ field: 'id', desc: false });
  });

  it('refuses text that is no condition with INVALID_QUERY naming it', () => {
    for (const bad of ['no condition', 'a!=1', 'status>a', '1x=2', 'x="a"b"']) {
      let caught: unknown;
      try {
        addWhere(bad);
      } catch (e) {
        caught = e;
      }
      expect(isStepfoldError(caught, 'INVALID_QUERY'), bad).toBe(true);
    }
    expect(() => parseListOrder('-')).toThrow(/field name/);
  });
});
