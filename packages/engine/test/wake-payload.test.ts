import { describe, expect, it } from 'vitest';
import { createStoreKit, isBusyNotice, parseWakePayload } from '../src/store/index.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { makeTestSnapshot } from '../src/testing/test-snapshot.js';

describe('parseWakePayload', () => {
  it('reads at, workflow, id and a snapshot of the instance named', () => {
    const s = { id: 'o-1', version: 3 };
    expect(parseWakePayload(`{"at":5,"w":"order","i":"o-1","s":${JSON.stringify(s)}}`)).toEqual({
      at: 5,
      workflow: 'order',
      id: 'o-1',
      snapshot: s,
    });
    expect(parseWakePayload('{"at":5}')).toEqual({ at: 5 });
  });

  it('drops a snapshot of another instance, or one with no valid id to check it against', () => {
    expect(parseWakePayload('{"at":5,"i":"o-1","s":{"id":"o-2"}}')).toEqual({ at: 5, id: 'o-1' });
    expect(parseWakePayload('{"at":5,"i":"no spaces","s":{"id":"no spaces"}}')).toEqual({ at: 5 });
    expect(parseWakePayload('{"at":5,"i":"o-1","s":"o-1"}')).toEqual({ at: 5, id: 'o-1' });
  });

  it('is null for anything else, and never throws', () => {
    for (const junk of [undefined, '', 'null', '[]', '7', '{', '{"at":"5"}', '{"at":null}', '{"w":"x"}'])
      expect(parseWakePayload(junk), String(junk)).toBeNull();
  });

  it('reads the signals a send notice carries with the snapshot, or marks them to claim by id', () => {
    const s = { id: 'o-1', version: 3 };
    const e = { type: 'signal', at: 4, name: 'go' };
    const p = `[{"n":7,"e":${JSON.stringify(e)}},{"n":9,"e":${JSON.stringify(e)}}]`;
    expect(parseWakePayload(`{"at":5,"i":"o-1","s":${JSON.stringify(s)},"p":${p}}`)).toEqual({
      at: 5,
      id: 'o-1',
      snapshot: s,
      sent: [
        { seq: 7, event: e },
        { seq: 9, event: e },
      ],
    });
    // Too large for the notice: no snapshot, and the signals are claimed by id.
    expect(parseWakePayload('{"at":5,"i":"o-1","p":true}')).toEqual({ at: 5, id: 'o-1', sent: [] });
    // A seq that is not an integer: not trusted, claimed by id instead.
    expect(parseWakePayload(`{"at":5,"i":"o-1","s":${JSON.stringify(s)},"p":[{"n":"7"}]}`)).toEqual({
      at: 5,
      id: 'o-1',
      snapshot: s,
      sent: [],
    });
  });
});

describe('busy notices', () => {
  const task = (queued: boolean, deadline: number) => ({
    step: 'a',
    phase: 'run' as const,
    attempt: 1,
    idempotencyKey: 'k',
    handler: 'h',
    dispatchedAt: 0,
    deadline,
    dispatchVersion: 1,
    ...(queued ? { queued } : {}),
  });
  it('a timer while a task runs is busy; a lone timer and a hand-off are not', () => {
    const timer = { timers: [{ kind: 'retry' as const, step: 'b', at: 50 }], wakeAt: 50 };
    expect(
      isBusyNotice(makeTestSnapshot('b-1', { ...timer, tasks: { 'a:run': task(false, 900) } }), 50),
    ).toBe(true);
    expect(isBusyNotice(makeTestSnapshot('b-2', timer), 50)).toBe(false);
    expect(isBusyNotice(makeTestSnapshot('b-3', { wakeAt: 7, tasks: { 'a:run': task(true, 7) } }), 7)).toBe(
      false,
    );
    const kit = createStoreKit('t', () => false, { asked: undefined, fallback: 1 << 20 });
    expect(kit.encode(makeTestSnapshot('b-1', { ...timer, tasks: { 'a:run': task(false, 900) } })).busy).toBe(
      true,
    );
    expect(parseWakePayload('{"at":5,"w":"x","i":"b-1","b":1}')).toEqual({
      at: 5,
      workflow: 'x',
      id: 'b-1',
      busy: true,
    });
    expect(parseWakePayload('{"at":5,"b":true}')).toEqual({ at: 5 });
  });

  it('the memory store marks them on its notices', async () => {
    const store = createMemoryStore();
    const heard: unknown[] = [];
    await store.wakes!.subscribe({ wake: (h) => heard.push(h) });
    const timer = { timers: [{ kind: 'retry' as const, step: 'b', at: 50 }], wakeAt: 50 };
    await store.create(makeTestSnapshot('b-1', { ...timer, tasks: { 'a:run': task(false, 900) } }));
    await store.create(makeTestSnapshot('b-2', timer));
    await new Promise((r) => setTimeout(r, 0));
    expect(heard).toEqual([
      { at: 50, workflow: 'conformance', id: 'b-1', busy: true },
      { at: 50, workflow: 'conformance', id: 'b-2' },
    ]);
  });
});
