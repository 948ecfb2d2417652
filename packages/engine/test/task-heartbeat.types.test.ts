import { type HandlerContext, workflow } from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';

// Type-level promises of `heartbeatMs` in the builder, checked by tsc (`pnpm typecheck`): a literal
// is a positive integer, and below a literal `timeoutMs` of the same step; the handler context
// has `heartbeat(details?)` and `heartbeatDetails`.

describe('heartbeatMs in the typed builder', () => {
  it('takes a positive integer below the timeout, or any number the compiler cannot see', () => {
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 2_000 });
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 2_000, timeoutMs: 60_000 });
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 59_999, timeoutMs: 60_000 });
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 9, timeoutMs: 10 });
    const ms: number = 5_000;
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: ms, timeoutMs: 1_000 });
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 1_000, timeoutMs: ms });
  });

  it('refuses what the compiler can see', () => {
    // @ts-expect-error not a positive integer
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 0 });
    // @ts-expect-error not an integer
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 1.5 });
    // @ts-expect-error not below the timeout
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 60_000, timeoutMs: 60_000 });
    // @ts-expect-error not below the timeout (more digits)
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 100_000, timeoutMs: 60_000 });
    // @ts-expect-error not below the timeout (same digits, a later one)
    workflow('a', 1).task('t', { handler: 'h', heartbeatMs: 61_000, timeoutMs: 60_000 });
  });

  it('gives handlers heartbeat(details?) and heartbeatDetails', () => {
    expectTypeOf<HandlerContext['heartbeat']>().toEqualTypeOf<(details?: unknown) => void>();
    expectTypeOf<HandlerContext['heartbeatDetails']>().toEqualTypeOf<unknown>();
  });
});
