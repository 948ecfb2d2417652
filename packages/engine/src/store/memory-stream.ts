import { StoreUnavailableError } from '../errors.js';
import { driverCall, type MemoryRows, type MemoryStream } from './memory-rows.js';
import type { StoredStreamPage, StreamDriver } from './store-driver.js';

// The in-memory store's stream calls: the reference semantics every database's stream driver
// matches. Each call runs in one turn of the event loop, so an append is atomic.

/** The in-memory store's stream calls over its streams. */
export function memoryStream(m: MemoryRows): StreamDriver {
  return {
    append: driverCall(m, append),
    read: driverCall(m, read),
    remove: driverCall(m, (rows: MemoryRows, instance: string) => void rows.streams.delete(instance)),
    // Not a driverCall: it returns the waiting promise itself.
    wait: async (instance, next, ms, signal) => {
      if (!m.available) throw new StoreUnavailableError('memory store is unavailable');
      return wait(m, instance, next, ms, signal);
    },
  };
}

function streamOf(m: MemoryRows, instance: string): MemoryStream {
  let s = m.streams.get(instance);
  if (!s) {
    s = { entries: [], fences: new Map(), waiting: new Set() };
    m.streams.set(instance, s);
  }
  return s;
}

function append(
  m: MemoryRows,
  instance: string,
  step: string,
  attempt: number,
  chunks: readonly string[],
): number | { fenced: number } {
  const s = streamOf(m, instance);
  const fence = s.fences.get(step) ?? 0;
  if (fence > attempt) return { fenced: fence };
  const before = s.entries.length;
  if (attempt > Math.max(fence, 1)) s.entries.push({ offset: s.entries.length, step, attempt, data: null });
  s.fences.set(step, attempt);
  for (const data of chunks) s.entries.push({ offset: s.entries.length, step, attempt, data });
  if (s.entries.length > before) {
    const woken = [...s.waiting];
    s.waiting.clear();
    // As a database would: after the write has returned.
    for (const w of woken) queueMicrotask(w);
  }
  return s.entries.length;
}

function read(m: MemoryRows, instance: string, from: number, limit: number): StoredStreamPage {
  const s = m.streams.get(instance);
  if (!s) return { entries: [], fences: {} };
  // Copies: the caller never holds the store's own records.
  return {
    entries: s.entries.slice(from, from + limit).map((e) => ({ ...e })),
    fences: Object.fromEntries(s.fences),
  };
}

function wait(
  m: MemoryRows,
  instance: string,
  next: number,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  const s = streamOf(m, instance);
  if (s.entries.length > next || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      s.waiting.delete(done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    s.waiting.add(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
