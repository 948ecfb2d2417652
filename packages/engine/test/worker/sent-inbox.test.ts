import { describe, expect, it } from 'vitest';
import { ValidationError, VersionConflictError } from '../../src/errors.js';
import type { SentSignal, Store } from '../../src/store/store.js';
import { makeTestSnapshot } from '../../src/testing/test-snapshot.js';
import { countLostTakes, SentInbox } from '../../src/worker/sent-inbox.js';
import type { WorkerStats } from '../../src/worker/types.js';
import { recorder } from './recorder.js';

const stats = () => ({ polls: 0, errors: 0, lostTakes: 0 }) as WorkerStats;
const sent: SentSignal[] = [{ seq: 1, event: { type: 'signal', at: 1, name: 's', payload: null } }];

function inboxStore() {
  const calls: unknown[][] = [];
  const store = {
    inbox: {
      async claim(now: number, n: number, ids?: string[]) {
        calls.push(['claim', now, n, ids]);
        return (ids ?? ['left']).slice(0, n).map((id) => ({ snapshot: makeTestSnapshot(id), sent }));
      },
      async drop(id: string, seqs: number[], version: number) {
        calls.push(['drop', id, seqs, version]);
      },
    },
  } as unknown as Store;
  return { store, calls };
}

describe('SentInbox', () => {
  it('claims by id and by its own lane, unclaimed (the write that applies them is conditional)', async () => {
    const { store, calls } = inboxStore();
    const s = stats();
    const inbox = new SentInbox(store, s, recorder().emit);
    expect(inbox.polled).toBe(true);
    expect(await inbox.claimFor(5, [])).toEqual([]);
    const got = await inbox.claimFor(5, ['a', 'b']);
    expect(got.map((d) => [d.id, d.unclaimed, d.sent?.length])).toEqual([
      ['a', true, 1],
      ['b', true, 1],
    ]);
    expect((await inbox.claimLeft(6, 2)).map((d) => d.id)).toEqual(['left']);
    expect(await inbox.claimLeft(6, 0)).toEqual([]);
    expect(calls).toEqual([
      ['claim', 5, 2, ['a', 'b']],
      ['claim', 6, 2, undefined],
    ]);
    expect(s.polls).toBe(2);
  });

  it('settles a failure: a lost race is claimed again, a lasting refusal drops them, anything else is not its business', async () => {
    const { store, calls } = inboxStore();
    const s = stats();
    const rec = recorder();
    const inbox = new SentInbox(store, s, rec.emit);
    expect(await inbox.settle(new VersionConflictError('a', 1, 2), 'a', sent, 3)).toBe('claim-again');
    const refusal = new ValidationError('INVALID_INPUT', 'bad payload', []);
    expect(await inbox.settle(refusal, 'a', sent, 3)).toBe('dropped');
    expect(calls).toEqual([['drop', 'a', [1], 3]]);
    expect(rec.events).toEqual([['error', refusal, 'tick']]);
    expect(await inbox.settle(new Error('network'), 'a', sent, 3)).toBe('not-handled');
    expect(s.errors).toBe(1);
  });

  it('is inert on a store without an inbox', async () => {
    const inbox = new SentInbox({} as Store, stats(), recorder().emit);
    expect(inbox.polled).toBe(false);
    expect(await inbox.claimLeft(1, 5)).toEqual([]);
  });
});

describe('countLostTakes', () => {
  it('counts the ids stood by for that the claim did not find', () => {
    const s = stats();
    countLostTakes([{ id: 'a', standby: true }, { id: 'b', standby: true }, { id: 'c' }], [{ id: 'b' }], s);
    expect(s.lostTakes).toBe(1);
  });
});
