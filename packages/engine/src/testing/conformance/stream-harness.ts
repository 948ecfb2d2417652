import { isStepfoldError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { StreamEntry, StreamStore } from '../../store/stream.js';
import type { SuiteContext } from './context.js';

// What the stream parts share: a fresh store's stream, whole reads, entries in brief, error codes.

/** A fresh store and its stream. */
export async function freshStream(ctx: SuiteContext): Promise<{ store: Store; stream: StreamStore }> {
  const store = await ctx.fresh();
  return { store, stream: store.stream! };
}

/** Every entry of the instance's stream from `from`, read in pages of `pageSize`. */
export async function readAll(
  stream: StreamStore,
  instance: string,
  from = 0,
  pageSize = 1000,
): Promise<StreamEntry[]> {
  const out: StreamEntry[] = [];
  for (let next = from; ; ) {
    const page = await stream.read(instance, { from: next, limit: pageSize });
    out.push(...page.entries);
    next = page.next;
    if (page.end) return out;
  }
}

/** An entry as `[offset, step, attempt, data]`, or `[offset, step, attempt, 'reset']`. */
export const brief = (e: StreamEntry) => [e.offset, e.step, e.attempt, e.type === 'reset' ? 'reset' : e.data];

/** The code of a rejected call, or 'ok'. */
export const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (isStepfoldError(e) ? e.code : String(e)),
  );
