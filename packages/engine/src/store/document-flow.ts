import type { FlowGrant, FlowKeyState, FlowNeed } from './flow.js';
import {
  type FlowDenial,
  type FlowDocument,
  type FlowWaiter,
  flowCounterOf,
  flowDenial,
  flowGiveBack,
  flowHas,
  flowKeyStateOf,
  flowRelease,
  flowRenew,
  flowTake,
  flowWait,
  instancesToWake,
  isEmptyFlowDocument,
  pruneFlowDocument,
} from './flow-document.js';
import type { FlowCounterRef, FlowDriver } from './store-driver.js';

// The flow calls of a store that keeps each counter in one record with a version: every change is
// a read, a pure step of flow-document.ts, and a write conditional on the version read. A lost race
// is read and tried again, a bounded number of times. Release and renew find a holder's documents
// with `holding` (an index of the store's own), so they ignore the counters a caller names.

/** A key's document as stored, with the version a conditional write compares. */
export interface StoredFlowDocument {
  doc: FlowDocument;
  version: number;
}

/** The database calls of a store whose flow keys are versioned documents. */
export interface FlowDocumentCalls {
  /** The stored documents of these counters, by {@link flowRefId}; a counter with none is left out. */
  read(refs: readonly FlowCounterRef[]): Promise<Map<string, StoredFlowDocument>>;
  /**
   * Writes `doc` (null: deletes the record) if the stored version is `version` (null: nothing is
   * stored), the new version being `version + 1` (1 for a new record). False when the condition failed.
   */
  write(ref: FlowCounterRef, doc: FlowDocument | null, version: number | null): Promise<boolean>;
  /** The documents where any of `holders` holds a slot or waits (a superset does no harm). */
  holding(holders: readonly string[]): Promise<StoredFlowDocument[]>;
  /**
   * Up to `limit` stored documents in (scope, key, period) order after `after`, only `scope`'s when
   * set, and the counter to read on after (the last one read), or null when there are no more.
   */
  page(query: { scope?: string | undefined; after: FlowCounterRef | null; limit: number }): Promise<{
    docs: StoredFlowDocument[];
    last: FlowCounterRef | null;
  }>;
  /** For stores that cannot find documents by holder: records that `holder` is on these counters, before it is. */
  note?(holder: string, refs: readonly FlowCounterRef[]): Promise<void>;
  /** Forgets what {@link note} recorded of `holders`, once they are released. */
  forget?(holders: readonly string[]): Promise<void>;
}

/** Options of {@link documentFlow}. */
export interface DocumentFlowOptions {
  /** Names the store in the error of a key contended past the retries. */
  name: string;
  /** How many times one change is read and tried again after losing a race (default 50). */
  retries?: number | undefined;
}

/** A string naming a counter uniquely: the key of {@link FlowDocumentCalls.read}'s map. */
export function flowRefId(ref: FlowCounterRef): string {
  return JSON.stringify([ref.scope, ref.key, ref.period]);
}

/** The order counters are listed in: scope, then key, then period. */
export function compareFlowCounters(a: FlowCounterRef, b: FlowCounterRef): number {
  return a.scope < b.scope
    ? -1
    : a.scope > b.scope
      ? 1
      : a.key < b.key
        ? -1
        : a.key > b.key
          ? 1
          : a.period - b.period;
}

/** What a change step returns: the document to write (undefined: nothing to write) and a value. */
type Step<T> = (doc: FlowDocument | null) => { next?: FlowDocument | null | undefined; value: T };

/**
 * The four flow calls over a store's versioned documents. An acquire of several keys is not one
 * write: it reads them all, and when every need can be met takes them one key at a time in (scope,
 * key) order, giving back what it took when a later key was taken meanwhile (then reads again).
 * A denied acquire records the waiter with a write conditional on the version it read, so a release
 * between the read and the write is seen, and the acquire tried again.
 */
export function documentFlow(calls: FlowDocumentCalls, options: DocumentFlowOptions): FlowDriver {
  const retries = options.retries ?? 50;

  /** Runs `step` on the stored document of `ref` and writes its result, read again after a lost race. */
  async function change<T>(ref: FlowCounterRef, step: Step<T>, read?: StoredFlowDocument | null): Promise<T> {
    let current = read;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (current === undefined) current = (await calls.read([ref])).get(flowRefId(ref)) ?? null;
      const { next, value } = step(current?.doc ?? null);
      if (next === undefined || (next === null && current === null)) return value;
      if (await calls.write(ref, next, current?.version ?? null)) return value;
      current = undefined;
      await backoff(attempt);
    }
    throw new Error(`${options.name} flow: counter ${flowRefId(ref)} changed under ${retries + 1} tries`);
  }

  /** One try of an acquire: the grant, or 'again' when a race made its reads stale. */
  async function tryAcquire(
    holder: string,
    instance: string,
    needs: readonly FlowNeed[],
    now: number,
    until: number,
  ): Promise<FlowGrant | 'again'> {
    const refs = needs.map(flowCounterOf);
    const read = await calls.read(refs);
    for (const need of needs) {
      const ref = flowCounterOf(need);
      const stored = read.get(flowRefId(ref));
      const denial = flowDenial(stored?.doc ?? null, holder, need, now);
      if (!denial) continue;
      await calls.note?.(holder, [ref]);
      // Written on the version the denial was read from: a release in between makes it try again.
      const recorded = await change<FlowDenial | 'again'>(
        ref,
        (doc) => {
          const fresh = flowDenial(doc, holder, need, now);
          if (!fresh) return { value: 'again' as const };
          const waits = doc?.waiting.find((w) => w.holder === holder);
          if (waits?.instance === instance && doc?.limit === need.limit) {
            return { value: fresh };
          }
          return { next: flowWait(doc, holder, instance, need, now), value: fresh };
        },
        stored ?? null,
      );
      return recorded;
    }
    await calls.note?.(holder, refs);
    const taken: Array<{ ref: FlowCounterRef; before: FlowDocument | null }> = [];
    // Needs name distinct counters (the kit merges the others): each is taken once.
    const ordered = [...needs].sort((a, b) => compareFlowCounters(flowCounterOf(a), flowCounterOf(b)));
    for (const need of ordered) {
      const ref = flowCounterOf(need);
      const took = await change<false | { before: FlowDocument | null }>(
        ref,
        (doc) => {
          if (flowDenial(doc, holder, need, now)) return { value: false };
          return { next: flowTake(doc, holder, need, now, until), value: { before: doc } };
        },
        read.get(flowRefId(ref)) ?? null,
      );
      if (took === false) {
        // Taken meanwhile: give back, newest first, and read again.
        for (const t of taken.reverse()) {
          await change(t.ref, (doc) => ({
            next: doc && pruneEmpty(flowGiveBack(doc, holder, t.before), now),
            value: null,
          }));
        }
        return 'again';
      }
      taken.push({ ref, before: took.before });
    }
    return { granted: true };
  }

  return {
    async acquire(holder, instance, needs, now, until) {
      if (needs.length === 0) return { granted: true };
      for (let attempt = 0; attempt <= retries; attempt++) {
        const grant = await tryAcquire(holder, instance, needs, now, until);
        if (grant !== 'again') return grant;
        await backoff(attempt);
      }
      throw new Error(`${options.name} flow: acquire for ${holder} raced ${retries + 1} times`);
    },

    async release(holders, now) {
      if (holders.length === 0) return [];
      const set = new Set(holders);
      const wake: FlowWaiter[] = [];
      for (const stored of await calls.holding(holders)) {
        const freed = await change(
          stored.doc,
          (doc) => {
            if (!doc || !flowHas(doc, set)) return { value: [] };
            const r = flowRelease(doc, set, now);
            return { next: r.doc, value: r.wake };
          },
          stored,
        );
        wake.push(...freed);
      }
      await calls.forget?.(holders);
      return instancesToWake(wake);
    },

    async renew(holders, until) {
      if (holders.length === 0) return;
      const set = new Set(holders);
      for (const stored of await calls.holding(holders)) {
        await change(
          stored.doc,
          (doc) => {
            const next = doc && flowRenew(doc, set, until);
            return { next: next ?? undefined, value: null };
          },
          stored,
        );
      }
    },

    async list({ scope, limit, after, now }) {
      const items: FlowKeyState[] = [];
      const size = Math.max(limit + 1, 16);
      for (let from = after; ; ) {
        const { docs, last } = await calls.page({ scope, after: from, limit: size });
        for (const stored of docs) {
          const state = flowKeyStateOf(stored.doc, now);
          if (state) {
            items.push(state);
            if (items.length > limit) return items;
          } else if (isEmptyFlowDocument(pruneFlowDocument(stored.doc, now))) {
            // Lapsed holds of a holder that never released (it crashed): the record goes.
            await calls.write(stored.doc, null, stored.version);
          }
        }
        if (!last) return items;
        from = last;
      }
    },
  };
}

/**
 * After a lost race: a wait of up to 2 ms doubling with each loss (at most 50 ms), at random, so
 * racers on one counter spread out instead of all reading and losing again together.
 */
const backoff = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * 2 ** attempt)));

const pruneEmpty = (doc: FlowDocument, now: number): FlowDocument | null =>
  isEmptyFlowDocument(pruneFlowDocument(doc, now)) ? null : doc;
