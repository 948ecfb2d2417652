import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseTime } from '../src/listing.js';
import { compactSchema, jsonSchemaOf } from '../src/payload-schema.js';
import { LoginLimiter } from '../src/rate-limit.js';

// The small pieces on their own: the schema reading, the time filter's parsing, the limiter's window.

describe('compactSchema', () => {
  const read = (schema: z.ZodType) => compactSchema(jsonSchemaOf(schema));
  it('reads objects, optional fields, enums, arrays, unions and bounds in one line', () => {
    expect(read(z.object({ kind: z.enum(['a', 'b']), tags: z.array(z.string()).optional() }))).toBe(
      '{ kind: "a" | "b", tags?: string[] }',
    );
    expect(read(z.object({ n: z.number().min(1).max(9), at: z.union([z.string(), z.null()]) }))).toBe(
      '{ n: number ≥ 1 ≤ 9, at: string | null }',
    );
    expect(read(z.object({ 'odd key': z.literal('x') }))).toBe('{ "odd key": "x" }');
  });
  it('has nothing to show for a schema without JSON Schema', () => {
    const plain = {
      '~standard': { version: 1 as const, vendor: 'x', validate: (v: unknown) => ({ value: v }) },
    };
    expect(jsonSchemaOf(plain)).toBeUndefined();
  });
});

describe('parseTime', () => {
  it('reads datetime-local values as UTC, ISO times with their zone, and epoch ms', () => {
    expect(parseTime('2026-01-02T03:04')).toBe(Date.UTC(2026, 0, 2, 3, 4));
    expect(parseTime('2026-01-02T03:04:05+01:00')).toBe(Date.UTC(2026, 0, 2, 2, 4, 5));
    expect(parseTime('1767323045000')).toBe(1767323045000);
    expect(parseTime('')).toBeUndefined();
    expect(parseTime('yesterday')).toBeUndefined();
  });
});

describe('LoginLimiter', () => {
  it('refuses a key after max failures until the oldest leaves the window', () => {
    let now = 1_000_000;
    const limiter = new LoginLimiter({ max: 2, windowMs: 10_000 }, () => now);
    limiter.fail(['addr:a']);
    expect(limiter.retryAfter(['addr:a'])).toBe(0);
    now += 4_000;
    limiter.fail(['addr:a']);
    expect(limiter.retryAfter(['addr:a'])).toBe(6); // the first failure leaves in 6 s
    expect(limiter.retryAfter(['addr:b'])).toBe(0);
    now += 6_000;
    expect(limiter.retryAfter(['addr:a'])).toBe(0);
  });
});
