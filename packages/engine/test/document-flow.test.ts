/**
 * The flow calls over versioned key documents (MongoDB, DynamoDB and the Durable Object use them),
 * over a map standing for the database: the races a real server makes rare are made to happen.
 */
import { describe, expect, it } from 'vitest';
import {
  compareFlowCounters,
  documentFlow,
  type FlowCounterRef,
  type FlowDocument,
  type FlowDocumentCalls,
  type FlowNeed,
  flowDenial,
  flowRefId,
  type StoredFlowDocument,
} from '../src/index.js';

/** Documents in a map, and a hook run before each write (where a test lets another caller in). */
function database() {
  const rows = new Map<string, StoredFlowDocument>();
  const hook: { beforeWrite?: ((ref: FlowCounterRef) => Promise<void>) | undefined } = {};
  const calls: FlowDocumentCalls = {
    async read(refs) {
      return new Map(
        refs.flatMap((r) => (rows.has(flowRefId(r)) ? [[flowRefId(r), rows.get(flowRefId(r))!]] : [])),
      );
    },
    async write(ref, doc, version) {
      const before = hook.beforeWrite;
      hook.beforeWrite = undefined;
      await before?.(ref);
      const id = flowRefId(ref);
      if ((rows.get(id)?.version ?? null) !== version) return false;
      if (doc) rows.set(id, { doc, version: (version ?? 0) + 1 });
      else rows.delete(id);
      return true;
    },
    async holding(holders) {
      return [...rows.values()].filter(
        (r) =>
          r.doc.holds.some((h) => holders.includes(h.holder)) ||
          r.doc.waiting.some((w) => holders.includes(w.holder)),
      );
    },
    async page({ after, limit }) {
      const docs = [...rows.values()]
        .filter((r) => !after || compareFlowCounters(r.doc, after) > 0)
        .sort((a, b) => compareFlowCounters(a.doc, b.doc))
        .slice(0, limit);
      return { docs, last: docs.length === limit ? docs[docs.length - 1]!.doc : null };
    },
  };
  const doc = (key: string) => rows.get(flowRefId({ scope: 's', key, period: 0 }))?.doc;
  return { calls, hook, doc, flow: documentFlow(calls, { name: 'test' }) };
}

const slot = (key: string): FlowNeed => ({ scope: 's', key, limit: 1 });

describe('flow over versioned documents', () => {
  it('gives back a key it took when a later one was taken meanwhile, then reports that one', async () => {
    const db = database();
    const other = documentFlow(db.calls, { name: 'other' });
    // Between this acquire's take of a and its take of b, another caller takes b.
    db.hook.beforeWrite = async () => {
      await other.acquire('rival', 'i-rival', [slot('b')], 0, 1000);
    };
    const grant = await db.flow.acquire('mine', 'i-mine', [slot('b'), slot('a')], 0, 1000);
    expect(grant).toEqual({ granted: false, need: slot('b'), until: 1000, count: 1 });
    expect(db.doc('a')).toBeUndefined();
    expect(db.doc('b')?.holds).toEqual([{ holder: 'rival', until: 1000 }]);
    expect(db.doc('b')?.waiting).toEqual([{ holder: 'mine', instance: 'i-mine', since: 0 }]);
  });

  it('sees a release between its denial and the waiter write, and takes the freed slot', async () => {
    const db = database();
    await db.flow.acquire('holder', 'i-1', [slot('a')], 0, 1000);
    db.hook.beforeWrite = async () => {
      await db.flow.release(['holder'], 5);
    };
    expect(await db.flow.acquire('late', 'i-2', [slot('a')], 5, 1000)).toEqual({ granted: true });
    expect(db.doc('a')).toMatchObject({ holds: [{ holder: 'late', until: 1000 }], waiting: [] });
  });

  it('tells when a full rate window frees its next start, also after its limit was lowered', () => {
    const doc: FlowDocument = {
      scope: 's',
      key: 'k',
      period: 100,
      limit: 3,
      holds: [],
      starts: [10, 20, 30].map((at, i) => ({ holder: `h${i}`, at })),
      waiting: [],
    };
    const rate = (limit: number): FlowNeed => ({ scope: 's', key: 'k', limit, periodMs: 100 });
    expect(flowDenial(doc, 'x', rate(3), 50)).toEqual({
      granted: false,
      need: rate(3),
      until: 110,
      count: 3,
    });
    // Two starts must leave the window before one more fits under a limit of 2.
    expect(flowDenial(doc, 'x', rate(2), 50)).toEqual({
      granted: false,
      need: rate(2),
      until: 120,
      count: 3,
    });
    expect(flowDenial(doc, 'x', rate(3), 110)).toBeNull();
    expect(flowDenial(doc, 'h1', rate(3), 50)).toBeNull();
  });

  it('keeps the starts of two periods, so an acquire whose now lags a later one is still refused', async () => {
    const db = database();
    const rate: FlowNeed = { scope: 's', key: 'r', limit: 3, periodMs: 100 };
    for (const at of [0, 1, 2])
      expect((await db.flow.acquire(`h${at}`, 'i', [rate], at, at)).granted).toBe(true);
    // A later caller (window (50, 150]: no start) starts; its write keeps the older starts.
    expect((await db.flow.acquire('late', 'i', [rate], 150, 150)).granted).toBe(true);
    const ref = { scope: 's', key: 'r', period: 100 };
    const starts = (await db.calls.read([ref])).get(flowRefId(ref))?.doc.starts;
    expect(starts?.map((x) => x.at)).toEqual([0, 1, 2, 150]);
    // A caller that read its clock at 50 lands now: its window holds the three starts (and the later one).
    expect(await db.flow.acquire('lag', 'i', [rate], 50, 50)).toMatchObject({ granted: false, count: 4 });
  });
});
