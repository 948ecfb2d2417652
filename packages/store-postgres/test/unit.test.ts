import { EventEmitter } from 'node:events';
import type { Snapshot } from '@stepfold/engine';
import type pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { createPostgresStore, isUnavailable, needsTextColumn, type PgPool } from '../src/index.js';
import { pgWakeSource } from '../src/wakes.js';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('postgres error mapping (no server)', () => {
  it('treats connection loss, shutdown and connect failures as unavailable', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08001']) {
      expect(isUnavailable(pgError(code)), code).toBe(true);
    }
    expect(isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailable(new Error('Connection terminated due to connection timeout'))).toBe(true);
    expect(isUnavailable(new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')]))).toBe(true);
  });

  it('lets SQL errors through', () => {
    for (const code of ['23505', '42P01', '42601', '22P05', '40001', '57014']) {
      expect(isUnavailable(pgError(code)), code).toBe(false);
    }
    expect(isUnavailable(new Error('boom'))).toBe(false);
    expect(isUnavailable(null)).toBe(false);
  });
});

describe('JSONB or text column (no server)', () => {
  it('detects the escapes JSONB refuses from the JSON text', () => {
    expect(needsTextColumn(JSON.stringify({ a: 'x\u0000' }))).toBe(true);
    expect(needsTextColumn(JSON.stringify(['\ud800']))).toBe(true);
    expect(needsTextColumn(JSON.stringify(['\udc00']))).toBe(true);
    expect(needsTextColumn(JSON.stringify(['\u0001 \u001f 😀 é']))).toBe(false);
    expect(needsTextColumn(JSON.stringify({ plain: 'text', n: 1 }))).toBe(false);
  });

  it('retries with the text column when JSONB refuses the value (54000: binary form too large)', async () => {
    const calls: unknown[][] = [];
    const spy = {
      async query(q: { text: string; values: unknown[] }) {
        calls.push(q.values);
        if (calls.length === 1)
          throw pgError('54000', 'total size of jsonb array elements exceeds the maximum');
        return { rowCount: 1, rows: [] };
      },
    };
    const store = createPostgresStore({ pool: spy as unknown as pg.Pool, snapshotColumn: 'jsonb' });
    const snapshot = {
      id: 'big',
      version: 1,
      status: 'running',
      wakeAt: 7.2,
      workflow: { name: 'wf' },
      timers: [],
      tasks: {},
    };
    await store.create(snapshot as unknown as Snapshot);
    const json = JSON.stringify(snapshot);
    // The definition column holds `name@version@hash` (this one names no version or hash); then
    // the fairness key ('' for none), the search attributes (null for none).
    const definition = 'wf@undefined@undefined';
    expect(calls).toEqual([
      ['big', 1, 'running', 'wf', '8', definition, '', null, json, null],
      ['big', 1, 'running', 'wf', '8', definition, '', null, null, json],
    ]);
    // A text store (the default) sends the text column at once.
    calls.length = 0;
    calls.push([]); // no refusal this time
    await createPostgresStore({ pool: spy as unknown as pg.Pool }).create(snapshot as unknown as Snapshot);
    expect(calls.slice(1)).toEqual([['big', 1, 'running', 'wf', '8', definition, '', null, null, json]]);
  });

  it('refuses a snapshotColumn other than text or jsonb', () => {
    expect(() => createPostgresStore({ pool: {} as pg.Pool, snapshotColumn: 'json' as 'text' })).toThrow(
      TypeError,
    );
  });
});

describe('wake subscription reconnects (no server)', () => {
  /** A fake pg client: an EventEmitter whose queries succeed unless `failing`, counting releases. */
  class FakeClient extends EventEmitter {
    queries: string[] = [];
    released: Array<Error | boolean | undefined> = [];
    async query(text: string) {
      this.queries.push(text);
      return { rows: [], rowCount: 0 };
    }
    release(destroy?: Error | boolean) {
      if (this.released.length) throw new Error('released twice');
      this.released.push(destroy);
    }
  }

  it('reports lost once, retries until a connection listens, then restored once; close gives it back', async () => {
    const clients: FakeClient[] = [];
    let refuse = 0;
    const pool = {
      query: async () => ({ rows: [], rowCount: 0 }),
      async connect() {
        if (refuse > 0) {
          refuse--;
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        }
        const c = new FakeClient();
        clients.push(c);
        return c;
      },
    };
    const source = pgWakeSource(pool as unknown as PgPool, 'stepfold_test', new Set(), {
      firstMs: 1,
      maxMs: 8,
    });
    const events: string[] = [];
    const sub = await source.subscribe({
      wake: (h) => events.push(`wake ${h.at} ${h.workflow}`),
      lost: (e) => events.push(`lost ${(e as Error & { code?: string }).code}`),
      restored: () => events.push('restored'),
    });
    const first = clients[0]!;
    expect(first.queries).toEqual(['LISTEN "stepfold_test"']);
    first.emit('notification', { channel: 'stepfold_test', payload: '{"at":5,"w":"wf"}' });
    first.emit('notification', { channel: 'other', payload: '{"at":6,"w":"wf"}' });

    refuse = 3; // the next three connects fail
    first.emit('error', Object.assign(new Error('terminating connection'), { code: '57P01' }));
    first.emit('end'); // the same loss: reported once
    await vi.waitFor(() => expect(events).toContain('restored'));
    expect(events).toEqual(['wake 5 wf', 'lost STORE_UNAVAILABLE', 'restored']);
    expect(first.released).toHaveLength(1);
    expect(first.released[0]).toBeInstanceOf(Error); // destroyed, not pooled
    expect(first.listenerCount('error')).toBe(0);
    expect(clients).toHaveLength(2);

    const second = clients[1]!;
    second.emit('notification', { channel: 'stepfold_test', payload: '{"at":7,"w":"wf"}' });
    await vi.waitFor(() => expect(events).toHaveLength(4));
    await sub.close();
    await sub.close();
    expect(second.queries).toEqual(['LISTEN "stepfold_test"', 'UNLISTEN "stepfold_test"']);
    expect(second.released).toEqual([false]);
    expect(second.listenerCount('notification')).toBe(0);
    second.emit('notification', { channel: 'stepfold_test', payload: '{"at":8,"w":"wf"}' });
    await new Promise((r) => setTimeout(r, 5));
    expect(events).toEqual(['wake 5 wf', 'lost STORE_UNAVAILABLE', 'restored', 'wake 7 wf']);
  });

  it('stops reconnecting when closed while the server is away', async () => {
    let connects = 0;
    const clients: FakeClient[] = [];
    const pool = {
      query: async () => ({ rows: [], rowCount: 0 }),
      async connect() {
        connects++;
        if (connects > 1) throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
        const c = new FakeClient();
        clients.push(c);
        return c;
      },
    };
    const source = pgWakeSource(pool as unknown as PgPool, 'c', new Set(), { firstMs: 1, maxMs: 2 });
    const sub = await source.subscribe({ wake() {} });
    clients[0]!.emit('end');
    await vi.waitFor(() => expect(connects).toBeGreaterThan(3));
    await sub.close();
    const after = connects;
    await new Promise((r) => setTimeout(r, 20));
    expect(connects).toBe(after);
  });
});
