import { createHarness, type Snapshot, snapshotBytes, step } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { type BatchInput, documentEntity } from './entity-fixtures.js';

/** Deterministic pseudo-random numbers (mulberry32), so the scenario is the same on every run. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Sent {
  at: number;
  id: string;
  seq: number;
}

/**
 * Bursts of document events: each burst 1–20 events 200 ms apart, a fifth of them
 * redeliveries of a recent event (same id), bursts separated by 1–25 s (so some gaps are longer
 * than the 10 s of quiet that closes a batch and some are not).
 */
function bursts(seed: number, count: number, start: number): Sent[] {
  const r = rng(seed);
  const out: Sent[] = [];
  let at = start;
  let seq = 0;
  while (out.length < count) {
    const size = 1 + Math.floor(r() * 20);
    for (let i = 0; i < size && out.length < count; i++) {
      at += 200;
      if (out.length > 5 && r() < 0.2) {
        const again = out[out.length - 1 - Math.floor(r() * 5)]!;
        out.push({ at, id: again.id, seq: again.seq });
      } else {
        out.push({ at, id: `doc-7:${seq}`, seq });
        seq++;
      }
    }
    at += 1_000 + Math.floor(r() * 24_000);
  }
  return out;
}

describe('document lifecycle entity', () => {
  it('bursts with duplicates → batches of ≤ 8 or after 10 s quiet → continue-as-new every 3 batches, nothing lost', () => {
    const BATCHES_PER_RUN = 3;
    const PROCESS_MS = 1_500; // signals keep arriving while a batch is processed: they buffer
    const wf = documentEntity({ batchesPerRun: BATCHES_PER_RUN });
    const start = 1_700_000_000_000;
    const h = createHarness(wf, { id: 'doc-7', now: start }).start({ doc: 'doc-7' });
    const sent = bursts(7, 600, start);
    const sentAt = new Map<number, number>(); // first delivery of each event
    for (const s of sent) if (!sentAt.has(s.seq)) sentAt.set(s.seq, s.at);

    const processed: number[] = [];
    const batches: Array<{ size: number; closedAt: number; lastSentAt: number; run: number; key: string }> =
      [];
    let doneAt: number | null = null; // when the in-flight process task reports back
    const runs = new Set<number>();
    let restartsWithBuffered = 0; // continue-as-new while events waited in the inbox

    /** Advances the fake clock to `t`, firing due timers and finishing processing on the way. */
    const until = (t: number) => {
      for (;;) {
        const wake = h.snapshot.wakeAt;
        const next = Math.min(doneAt ?? Number.POSITIVE_INFINITY, wake ?? Number.POSITIVE_INFINITY);
        if (next > t) break;
        h.now = Math.max(h.now, next);
        if (doneAt !== null && doneAt <= h.now) {
          const [task] = h.dispatched('process');
          const { events } = task!.input as BatchInput;
          const before = h.snapshot;
          h.complete('process', { iteration: task!.iteration, count: events.length });
          if (h.snapshot.run > before.run && before.inbox.length > 0) restartsWithBuffered++;
          doneAt = null;
        } else h.send({ type: 'tick' });
        observe();
      }
      h.now = Math.max(h.now, t);
    };
    /** Records a batch the moment its process task is dispatched. */
    const observe = () => {
      runs.add(h.snapshot.run);
      const [task] = h.dispatched('process');
      if (!task || doneAt !== null) return;
      const { events } = task.input as BatchInput;
      const seqs = events.map((e) => (e as { seq: number }).seq);
      processed.push(...seqs);
      batches.push({
        size: seqs.length,
        closedAt: h.now,
        lastSentAt: Math.max(...seqs.map((q) => sentAt.get(q)!)),
        run: h.snapshot.run,
        key: task.idempotencyKey,
      });
      doneAt = h.now + PROCESS_MS;
    };

    let duplicates = 0;
    for (const s of sent) {
      until(s.at);
      if (!h.signal('event', { doc: 'doc-7', seq: s.seq }, s.id)) duplicates++;
      observe();
    }
    until(sent[sent.length - 1]!.at + 60_000);

    const unique = new Set(sent.map((s) => s.seq));
    expect(duplicates).toBe(sent.length - unique.size);
    expect(duplicates).toBeGreaterThan(50);
    // Every unique event processed exactly once, in order; no duplicate reached a handler.
    expect(processed).toEqual([...unique].sort((a, b) => a - b));
    expect(new Set(processed).size).toBe(processed.length);
    // Batches: never more than 8; a smaller one closed only after 10 s without a new event.
    for (const b of batches) {
      expect(b.size).toBeGreaterThan(0);
      expect(b.size).toBeLessThanOrEqual(8);
      if (b.size < 8) expect(b.closedAt - b.lastSentAt).toBeGreaterThanOrEqual(10_000);
    }
    expect(batches.filter((b) => b.size === 8).length).toBeGreaterThan(10);
    expect(batches.filter((b) => b.size < 8).length).toBeGreaterThan(10);
    // Continue-as-new every 3 batches; keys name the run, so none repeats.
    const final: Snapshot = h.snapshot;
    expect(final.run).toBe(Math.floor(batches.length / BATCHES_PER_RUN) + 1);
    expect(runs.size).toBe(final.run);
    for (const [i, b] of batches.entries()) expect(b.run).toBe(Math.floor(i / BATCHES_PER_RUN) + 1);
    expect(new Set(batches.map((b) => b.key)).size).toBe(batches.length);
    expect(restartsWithBuffered).toBeGreaterThan(3);
    // Quiet at the end: nothing buffered, nothing half-collected, asleep until the next event.
    expect(final.inbox).toEqual([]);
    expect(final.steps.gather?.batch?.items).toEqual([]);
    expect(final.status).toBe('waiting');
    expect(final.wakeAt).toBeNull();
    expect(JSON.stringify(h.replayed())).toBe(JSON.stringify(final));
  });
});

describe('flat size: one entity, 100,000 signals', () => {
  it('the snapshot after 100k signals is at most 1.5× its size after the 10th batch; runs keep turning over', () => {
    const BATCHES_PER_RUN = 10;
    const wf = documentEntity({ batchesPerRun: BATCHES_PER_RUN });
    let now = 1_700_000_000_000;
    let s = step(wf, null, { type: 'start', at: now, id: 'doc-1', input: { doc: 'doc-1' } });
    let seq = 0;
    let batches = 0;
    let processed = 0;
    let duplicates = 0;
    let maxInbox = 0;
    const sizes = new Map<number, number>();
    const signal = () => {
      now += 100;
      s = step(wf, s, {
        type: 'signal',
        at: now,
        name: 'event',
        payload: { doc: 'doc-1', seq },
        id: `doc-1:${String(seq).padStart(6, '0')}`,
      });
      seq++;
      if (seq % 16 === 0) {
        // a redelivery of the previous event: nothing to write
        const again = step(wf, s, {
          type: 'signal',
          at: now,
          name: 'event',
          payload: null,
          id: `doc-1:${String(seq - 1).padStart(6, '0')}`,
        });
        expect(again).toBe(s);
        duplicates++;
      }
    };
    const started = performance.now();
    // Each batch: 3 events already buffered (sent while the previous batch was processed) plus
    // live ones until 8; every 5th batch of a run closes at 5 events after 10 s of quiet.
    while (seq < 100_000 || batches % BATCHES_PER_RUN !== 0) {
      const k = (batches % BATCHES_PER_RUN) + 1;
      if (k === 5) {
        while ((s.steps.gather?.batch?.items.length ?? 0) < 5) signal();
        now += 10_000;
        s = step(wf, s, { type: 'tick', at: now });
      } else {
        while (!s.tasks.process) signal();
      }
      const task = s.tasks.process!;
      const size = (s.steps.gather!.output as unknown[]).length;
      expect(size).toBe(k === 5 ? 5 : 8);
      processed += size;
      for (let i = 0; i < 3; i++) signal();
      maxInbox = Math.max(maxInbox, s.inbox.length);
      now += 50;
      s = step(wf, s, {
        type: 'task.completed',
        at: now,
        step: 'process',
        attempt: task.attempt,
        key: task.idempotencyKey,
        output: { iteration: s.steps.process!.iteration, count: size },
      });
      batches++;
      if (batches % BATCHES_PER_RUN === 0) sizes.set(batches, snapshotBytes(JSON.stringify(s)));
    }
    const seconds = (performance.now() - started) / 1000;
    const at10 = sizes.get(10)!;
    const at40 = sizes.get(40)!; // every bounded ring (log 16, seen ids 64) is full by now
    const atEnd = snapshotBytes(JSON.stringify(s));
    console.log(
      `flat size: ${seq} signals (${duplicates} redeliveries), ${batches} batches, run ${s.run}, ` +
        `${at10} B after batch 10, ${at40} B after batch 40, ${atEnd} B at the end ` +
        `(${(atEnd / at10).toFixed(2)}× / ${(atEnd / at40).toFixed(2)}×), ${seconds.toFixed(1)} s`,
    );
    expect(seq).toBeGreaterThanOrEqual(100_000);
    expect(s.run).toBe(batches / BATCHES_PER_RUN + 1);
    expect(s.run).toBeGreaterThan(1_000);
    expect(atEnd).toBeLessThanOrEqual(1.5 * at10);
    expect(atEnd).toBeLessThanOrEqual(1.1 * at40);
    // Every run boundary after the rings filled has the same size, but for counters gaining
    // digits (the version is written into each of the 16 log entries).
    const late = [...sizes].filter(([b]) => b >= 40).map(([, v]) => v);
    expect(Math.max(...late) - Math.min(...late)).toBeLessThan(256);
    // Bounded parts stayed bounded; nothing was lost (3 buffered at the end wait in the new run).
    expect(maxInbox).toBe(3);
    expect(s.seenSignals.length).toBe(64);
    expect(s.log.length).toBe(16);
    expect(processed + s.inbox.length + (s.steps.gather?.batch?.items.length ?? 0)).toBe(seq);
  }, 180_000);
});
