import { afterAll, describe, expect, it } from 'vitest';
import { aesGcmCodec } from '../../codec/aes-gcm.js';
import { defineWorkflow } from '../../definition/compile.js';
import { createMemoryPayloadStore } from '../../payloads/memory-payload-store.js';
import { offloading } from '../../payloads/offloading.js';
import type { PayloadStore } from '../../payloads/payload-store.js';
import { createRunner } from '../../runner/runner.js';
import type { Runner } from '../../runner/types.js';
import type { Snapshot } from '../../snapshot.js';
import type { Store } from '../../store/store.js';
import { createWorker } from '../../worker/worker.js';
import { until } from './context.js';

// Encryption at rest on a real store: a workflow whose input, outputs, signal data (sent to the
// store's inbox, buffered in the snapshot, gathered by a collect step) and offloaded payload each
// hold a marker string, run through a runner with a codec; the store's raw rows never hold one.

/** Options of {@link runEncryptionConformance}. */
export interface EncryptionConformanceOptions {
  /** Shown in the test names, e.g. `postgres`. */
  name: string;
  /** A new, empty store isolated from every other one. */
  createStore(): Store | Promise<Store>;
  /** Drops what `createStore` made; called once per store after the suite. */
  destroyStore?(store: Store): Promise<void>;
  /** Everything the database holds for `store` (rows, keys, documents, inbox entries), read directly, as text. */
  rawText(store: Store): Promise<string>;
  /** The payload store offloaded bodies go to (default: a memory one). */
  createPayloadStore?(): PayloadStore | Promise<PayloadStore>;
  /** Everything the database holds for `payloads`, read directly (default: every body through `list` and `get`). */
  rawPayloadText?(payloads: PayloadStore): Promise<string>;
}

const MARKS = ['MARK-INPUT', 'MARK-OUTPUT', 'MARK-SIGNAL', 'MARK-ITEM-1', 'MARK-ITEM-2', 'MARK-PAYLOAD'];

/** Assess, branch on its (encrypted) score, wait for a verdict, gather two items, then report large. */
const claim = defineWorkflow({
  name: 'sealed-claim',
  version: 1,
  start: 'assess',
  steps: {
    assess: { kind: 'task', handler: 'assess', next: 'decide' },
    decide: {
      kind: 'choice',
      branches: [{ when: { '>': [{ var: 'outputs.assess.score' }, 50] }, next: 'review' }],
      otherwise: 'reject',
    },
    review: { kind: 'wait', signal: 'verdict', next: 'gather' },
    gather: { kind: 'collect', signal: 'item', maxItems: 2, next: 'report' },
    report: {
      kind: 'task',
      handler: 'report',
      input: { who: 'input.patient', verdict: 'outputs.review.note', items: 'outputs.gather' },
    },
    reject: { kind: 'fail', error: { message: 'score too low' } },
  },
});

const key = () => crypto.getRandomValues(new Uint8Array(32));

/** Registers the encryption part for one store: call it at the top level of a test file. */
export function runEncryptionConformance(options: EncryptionConformanceOptions): void {
  describe(`encryption conformance: ${options.name}`, () => {
    const opened: Store[] = [];
    const payloadStores: PayloadStore[] = [];
    afterAll(async () => {
      for (const store of opened) {
        await options.destroyStore?.(store);
        await store.close();
      }
      for (const p of payloadStores) await p.close();
    });

    it('keeps input, outputs, signal data and offloaded payloads out of the raw rows; conditions still read them', async () => {
      const store = await options.createStore();
      opened.push(store);
      await store.setup();
      const payloads = (await options.createPayloadStore?.()) ?? createMemoryPayloadStore();
      payloadStores.push(payloads);
      await payloads.setup();
      const codec = aesGcmCodec({ keys: { 'k-conf': key() } });
      const seen: unknown[] = [];
      const runner = createRunner({
        store,
        workflows: [claim],
        codec,
        payloads: offloading({ store: payloads, threshold: 1024 }),
        handlers: {
          assess: async ({ input }) => ({
            score: 80,
            note: 'MARK-OUTPUT',
            of: (input as { patient: string }).patient,
          }),
          report: async ({ input }) => {
            seen.push(input);
            return { body: `MARK-PAYLOAD ${'x'.repeat(4096)}` };
          },
        },
      });
      const raw = async () => options.rawText(store);
      const clean = async (when: string) => {
        const text = await raw();
        expect(text, `${when}: the raw rows hold the instance`).toContain('c-1');
        expect(text, `${when}: and its encrypted values`).toContain('aes-gcm');
        for (const m of MARKS) expect(text.includes(m), `${when}: ${m} in the raw rows`).toBe(false);
      };

      await runner.start('sealed-claim', 'c-1', { patient: 'MARK-INPUT' });
      const get = async (): Promise<Snapshot> => {
        const s = await runner.get('c-1');
        if (!s) throw new Error('instance c-1 is gone');
        return s;
      };
      // The choice read the encrypted score: the instance waits for its verdict.
      expect((await get()).active).toEqual(['review']);
      // Sent before any worker runs: on a store with an inbox it waits there, encrypted.
      await runner.send('c-1', 'item', { note: 'MARK-ITEM-1' });
      await clean('a signal sent');

      const worker = createWorker({ runner });
      await worker.start();
      try {
        // No step gathers yet: the item is buffered in the snapshot's inbox.
        await until('the item buffered', async () => (await get()).inbox.length === 1, 20_000);
        await clean('an item buffered');
        await runner.send('c-1', 'verdict', { note: 'MARK-SIGNAL' });
        const gathering = (s: Snapshot) => s.steps['gather']?.batch?.items.length === 1;
        await until('the verdict applied and the item gathered', async () => gathering(await get()), 20_000);
        await clean('one item gathered');
        await runner.send('c-1', 'item', { note: 'MARK-ITEM-2' });
        await until('the claim completed', async () => (await get()).status === 'completed', 20_000);
      } finally {
        await worker.stop({ graceMs: 1000 });
      }
      await clean('completed');

      // Handlers and get see plaintext; the payload's body is encrypted where it is stored.
      const done = await get();
      expect(done.steps['assess']?.output).toMatchObject({ note: 'MARK-OUTPUT', of: 'MARK-INPUT' });
      expect(done.steps['review']?.output).toEqual({ note: 'MARK-SIGNAL' });
      expect(seen).toEqual([
        {
          who: 'MARK-INPUT',
          verdict: 'MARK-SIGNAL',
          items: [{ note: 'MARK-ITEM-1' }, { note: 'MARK-ITEM-2' }],
        },
      ]);
      expect(done.steps['report']?.output).toMatchObject({ body: expect.stringMatching(/^MARK-PAYLOAD/) });
      const bodies = options.rawPayloadText
        ? await options.rawPayloadText(payloads)
        : await memoryBodies(payloads, 'c-1');
      expect(bodies).toContain('aes-gcm');
      expect(bodies.includes('MARK-PAYLOAD')).toBe(false);
    }, 60_000);

    it('a runner without the key (or with another under its id) refuses the instance, and writes nothing', async () => {
      const store = await options.createStore();
      opened.push(store);
      await store.setup();
      const handlers = { assess: async () => ({ score: 10, note: 'MARK-OUTPUT' }), report: async () => null };
      const owner = createRunner({
        store,
        workflows: [claim],
        handlers,
        codec: aesGcmCodec({ keys: { k1: key() } }),
      });
      await owner.start('sealed-claim', 'c-1', { patient: 'MARK-INPUT' });
      const before = await options.rawText(store);
      const refusals: Array<[Runner, string]> = [
        [
          createRunner({ store, workflows: [claim], handlers, codec: aesGcmCodec({ keys: { k2: key() } }) }),
          'CODEC_KEY_MISSING',
        ],
        [
          createRunner({ store, workflows: [claim], handlers, codec: aesGcmCodec({ keys: { k1: key() } }) }),
          'CODEC_DECRYPT_FAILED',
        ],
      ];
      for (const [runner, code] of refusals) {
        await expect(runner.get('c-1')).rejects.toMatchObject({ code });
        await expect(runner.cancel('c-1')).rejects.toMatchObject({ code });
      }
      expect(await options.rawText(store)).toBe(before);
      // The owner still reads it (the score of 10 failed the claim at the choice).
      expect((await owner.get('c-1'))?.status).toBe('failed');
    });
  });
}

/** Every body `owner` has in `payloads`, as stored. */
async function memoryBodies(payloads: PayloadStore, owner: string): Promise<string> {
  const page = await payloads.list(owner, { limit: 100 });
  const bodies = await Promise.all(page.items.map((h) => payloads.get(owner, h)));
  return bodies.join('\n');
}
