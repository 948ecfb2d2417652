import type { Snapshot } from '@stepfold/engine';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, isUnavailable, needsTextColumn } from '../src/index.js';

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
    const store = createPostgresStore({ pool: spy as unknown as pg.Pool });
    const snapshot = { id: 'big', version: 1, status: 'running', wakeAt: 7.2, workflow: { name: 'wf' } };
    await store.create(snapshot as unknown as Snapshot);
    const json = JSON.stringify(snapshot);
    expect(calls).toEqual([
      ['big', 1, 'running', 'wf', '8', json, null],
      ['big', 1, 'running', 'wf', '8', null, json],
    ]);
  });
});
