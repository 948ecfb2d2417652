import { StreamFencedError, ValidationError } from '../errors.js';
import { isFlowText } from './flow-calls.js';
import type { StoredStreamEntry, StreamDriver } from './store-driver.js';
import type { StoreParts } from './store-parts.js';
import type {
  StreamAppended,
  StreamEntry,
  StreamPage,
  StreamReadQuery,
  StreamStore,
  StreamTailOptions,
} from './stream.js';
import { attemptStream } from './stream-attempt.js';
import {
  type EncodedChunk,
  encodeChunk,
  fenceOf,
  MAX_STREAM_BATCH,
  MAX_STREAM_BATCH_BYTES,
  MAX_STREAM_PAGE,
  MAX_STREAM_STEP_LENGTH,
} from './stream-chunks.js';
import { streamWriter } from './stream-writer.js';

// The `stream` capability of a store made by `defineStore`, over the driver's stream calls: every
// argument checked and every chunk encoded here, superseded chunks left out of reads, the tail
// loop, and the batching writer.

/** How long a tail that caught up waits for a store's notice before it reads again anyway (ms). */
const NOTICE_WAIT_MS = 5_000;

/** How often a tail that caught up reads again on a store without notices (ms). */
const DEFAULT_POLL_MS = 200;

function invalid(path: string, message: string): never {
  throw new ValidationError('INVALID_INPUT', `stream: invalid ${path}`, [{ path, message }]);
}

/** The step of a stream address, checked: 1-512 characters a database stores (no NUL, no lone surrogate). */
export function streamStep(step: unknown): string {
  if (!(isFlowText(step, 'scope') && step.length <= MAX_STREAM_STEP_LENGTH))
    invalid('step', `must be 1-${MAX_STREAM_STEP_LENGTH} characters, without NUL or lone surrogates`);
  return step;
}

/** The attempt of a stream address, checked: a positive safe integer. */
export function streamAttempt(attempt: unknown): number {
  if (!(Number.isSafeInteger(attempt) && (attempt as number) >= 1))
    invalid('attempt', `must be a positive integer, got ${String(attempt)}`);
  return attempt as number;
}

/** The {@link StreamStore} of a defined store whose driver has stream calls. */
export function definedStream(parts: StoreParts, calls: StreamDriver): StreamStore {
  const { guard } = parts.kit;

  const appendEncoded = async (
    instance: string,
    step: string,
    attempt: number,
    chunks: readonly EncodedChunk[],
  ): Promise<StreamAppended> => {
    const texts = chunks.map((c) => c.json);
    const answer = await guard('stream.append', () => calls.append(instance, step, attempt, texts));
    if (typeof answer !== 'number') throw new StreamFencedError(instance, step, attempt, answer.fenced);
    return { first: answer - texts.length, next: answer };
  };

  // The fences of the latest page read: what a tail filters the entries a wait brought by.
  const read = async (
    instance: string,
    from: number,
    limit: number,
  ): Promise<StreamPage & { fences?: Readonly<Record<string, number>> }> => {
    const entries: StreamEntry[] = [];
    let next = from;
    let fences: Readonly<Record<string, number>> = {};
    // A page full of superseded chunks is read past, a bounded number of times per call.
    for (let round = 0; round < 8; round++) {
      const page = await guard('stream.read', () => calls.read(instance, next, limit));
      fences = page.fences;
      for (const e of page.entries) {
        if (e.offset !== next) break; // a hole: what follows is not visible yet
        next = e.offset + 1;
        if (e.data === null)
          entries.push({ type: 'reset', offset: e.offset, step: e.step, attempt: e.attempt });
        else if (fenceOf(page.fences, e.step) <= e.attempt)
          entries.push({
            type: 'chunk',
            offset: e.offset,
            step: e.step,
            attempt: e.attempt,
            data: JSON.parse(e.data),
          });
        if (entries.length === limit) return { entries, next, end: false, fences };
      }
      if (page.entries.length < limit || next !== page.entries[page.entries.length - 1]!.offset + 1)
        return { entries, next, end: true, fences };
    }
    return { entries, next, end: false, fences };
  };

  /**
   * Waits until the stream may hold an entry at `next` (by the store's notice, or a poll interval);
   * resolves with the entries the store's wait brought, when it brings them.
   */
  const pause = async (
    instance: string,
    next: number,
    o: StreamTailOptions,
  ): Promise<readonly StoredStreamEntry[] | undefined> => {
    const signal = o.signal;
    if (calls.wait) {
      try {
        return (await calls.wait(instance, next, NOTICE_WAIT_MS, signal)) ?? undefined;
      } catch {
        // A notice channel that failed: poll instead (the next read reports a store that is down).
      }
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, o.pollMs ?? DEFAULT_POLL_MS);
      signal?.addEventListener('abort', done, { once: true });
    });
    return undefined;
  };

  async function* tail(instance: string, o: StreamTailOptions): AsyncGenerator<StreamEntry> {
    let from = o.from ?? 0;
    while (!o.signal?.aborted) {
      const page = await read(instance, from, MAX_STREAM_PAGE);
      for (const e of page.entries) {
        if (o.signal?.aborted) return;
        yield e;
      }
      from = page.next;
      if (!page.end || o.signal?.aborted) continue;
      const woke = await pause(instance, from, o);
      // What the wait brought, yielded at once (the next read comes after, off the reader's path):
      // a chunk of an attempt the page's fences superseded is left out, as a read leaves it out.
      const fences: Record<string, number> = { ...page.fences };
      for (const e of woke ?? []) {
        if (e.offset !== from || o.signal?.aborted) break;
        from = e.offset + 1;
        if (e.data === null) {
          fences[e.step] = Math.max(fences[e.step] ?? 0, e.attempt);
          yield { type: 'reset', offset: e.offset, step: e.step, attempt: e.attempt };
        } else if (fenceOf(fences, e.step) <= e.attempt)
          yield {
            type: 'chunk',
            offset: e.offset,
            step: e.step,
            attempt: e.attempt,
            data: JSON.parse(e.data),
          };
      }
    }
  }

  const offset = (value: unknown, path: string): number => {
    if (!(Number.isSafeInteger(value) && (value as number) >= 0))
      invalid(path, `must be a non-negative integer, got ${String(value)}`);
    return value as number;
  };

  const stream: StreamStore = {
    async begin(instance, step, attempt) {
      const id = parts.kit.id(instance);
      return (await appendEncoded(id, streamStep(step), streamAttempt(attempt), [])).next;
    },
    async append(instance, step, attempt, chunks) {
      const id = parts.kit.id(instance);
      const s = streamStep(step);
      const a = streamAttempt(attempt);
      if (!Array.isArray(chunks)) invalid('chunks', 'must be an array');
      if (chunks.length > MAX_STREAM_BATCH) invalid('chunks', `must hold at most ${MAX_STREAM_BATCH} chunks`);
      const encoded = chunks.map((c, i) => encodeChunk(c, `chunks[${i}]`));
      const bytes = encoded.reduce((n, c) => n + c.bytes, 0);
      if (bytes > MAX_STREAM_BATCH_BYTES)
        invalid(
          'chunks',
          `are ${bytes} bytes of JSON, over the limit of ${MAX_STREAM_BATCH_BYTES} per append`,
        );
      return appendEncoded(id, s, a, encoded);
    },
    async read(instance, query: StreamReadQuery = {}) {
      const id = parts.kit.id(instance);
      const from = offset(query.from ?? 0, 'from');
      const limit = query.limit ?? MAX_STREAM_PAGE;
      if (!(Number.isSafeInteger(limit) && limit >= 1)) invalid('limit', 'must be a positive integer');
      const { fences: _fences, ...page } = await read(id, from, Math.min(limit, MAX_STREAM_PAGE));
      return page;
    },
    tail(instance, options = {}) {
      const id = parts.kit.id(instance);
      offset(options.from ?? 0, 'from');
      const poll = options.pollMs;
      if (poll !== undefined && !(Number.isSafeInteger(poll) && poll >= 1))
        invalid('pollMs', 'must be a positive integer (ms)');
      return tail(id, options);
    },
    writer(instance, step, attempt, options = {}) {
      const id = parts.kit.id(instance);
      const s = streamStep(step);
      const a = streamAttempt(attempt);
      return streamWriter((chunks) => appendEncoded(id, s, a, chunks), options);
    },
    attempt(instance, step, attempt) {
      return attemptStream(stream, instance, step, attempt);
    },
    async remove(instance) {
      const id = parts.kit.id(instance);
      await guard('stream.remove', () => calls.remove(id));
    },
  };
  return stream;
}
