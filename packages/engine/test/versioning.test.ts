import {
  createMemoryStore,
  createRunner,
  definitionHash,
  type HandlerContext,
  type Snapshot,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// v1: draft → wait for approval (24 h timeout → expire) → publish.
const v1 = workflow('article', 1)
  .task('draft', { handler: 'draft' })
  .wait('approve', { signal: 'approved', timeoutMs: 86_400_000, onTimeout: 'expire' })
  .task('publish', { handler: 'publishV1', end: true })
  .task('expire', { handler: 'expire' })
  .build();

// v2 adds a review step and publishes differently.
const v2 = workflow('article', 2)
  .task('draft', { handler: 'draft' })
  .wait('approve', { signal: 'approved', timeoutMs: 86_400_000, onTimeout: 'expire' })
  .task('review', { handler: 'review' })
  .task('publish', { handler: 'publishV2', end: true })
  .task('expire', { handler: 'expire' })
  .build();

/** Just the handlers one runner's workflows name: each runner here can run nothing else. */
function only<T extends object, K extends keyof T>(o: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}
const V1 = ['draft', 'publishV1', 'expire'] as const;
const V2 = ['draft', 'review', 'publishV2', 'expire'] as const;

function recorder(calls: string[]) {
  const h = (name: string) => (c: HandlerContext) => {
    calls.push(`${c.instanceId}:${name}`);
    return { by: name };
  };
  return {
    draft: h('draft'),
    publishV1: h('publishV1'),
    publishV2: h('publishV2'),
    review: h('review'),
    expire: h('expire'),
  };
}

describe('versioning: a new version beside the old one', () => {
  it('v1 instances waiting when v2 is registered finish on v1; new starts use v2', async () => {
    let now = 1_000;
    const store = createMemoryStore();
    const calls: string[] = [];
    const old = createRunner({
      store,
      workflows: [v1],
      handlers: only(recorder(calls), ...V1),
      clock: () => now,
    });
    for (const id of ['a-1', 'a-2', 'a-3']) expect((await old.start('article', id)).status).toBe('waiting');

    // A deploy: the new runner knows both versions.
    const runner = createRunner({ store, workflows: [v2, v1], handlers: recorder(calls), clock: () => now });
    const fresh = await runner.start('article', 'b-1');
    expect(fresh.workflow).toEqual({ name: 'article', version: 2, hash: definitionHash(v2) });
    const pinned = await runner.start('article', 'b-2', undefined, { version: 1 });
    expect(pinned.workflow.version).toBe(1);

    now += 60_000;
    for (const id of ['a-1', 'a-2', 'b-1']) {
      const s = await runner.signal(id, 'approved', { ok: true });
      expect(s.status).toBe('completed');
    }
    // a-3 is left to time out: the v1 timer fires on v1 too
    now += 86_400_000;
    expect((await runner.processDue(now)).sort()).toEqual(['a-3', 'b-2']);
    const all = await Promise.all(['a-1', 'a-2', 'a-3', 'b-1', 'b-2'].map((id) => runner.get(id)));
    const by = Object.fromEntries(all.map((s) => [s!.id, s!])) as Record<string, Snapshot>;
    for (const id of ['a-1', 'a-2', 'a-3', 'b-2']) {
      expect(by[id]!.workflow).toEqual({ name: 'article', version: 1, hash: definitionHash(v1) });
    }
    expect(by['a-1']!.steps.review).toBeUndefined();
    expect(by['b-1']!.steps.review?.status).toBe('completed');
    expect(calls.filter((c) => c.endsWith('publishV1')).sort()).toEqual(['a-1:publishV1', 'a-2:publishV1']);
    expect(calls.filter((c) => c.endsWith('publishV2'))).toEqual(['b-1:publishV2']);
    expect(calls.filter((c) => c.endsWith('review'))).toEqual(['b-1:review']);
    expect(by['a-3']!.output).toEqual({ by: 'expire' });
  });

  it('a runner without v1 refuses v1 instances with UNKNOWN_VERSION and writes nothing; others still progress', async () => {
    let now = 0;
    const store = createMemoryStore();
    const calls: string[] = [];
    const both = createRunner({ store, workflows: [v1, v2], handlers: recorder(calls), clock: () => now });
    await both.start('article', 'old', undefined, { version: 1 });
    await both.start('article', 'new');
    const before = await store.load('old');

    const onlyV2 = createRunner({
      store,
      workflows: [v2],
      handlers: only(recorder(calls), ...V2),
      clock: () => now,
    });
    await expect(onlyV2.signal('old', 'approved', {})).rejects.toMatchObject({
      code: 'UNKNOWN_VERSION',
      name: 'RegistryError',
    });
    await expect(onlyV2.tick('old', 1e12)).rejects.toMatchObject({ code: 'UNKNOWN_VERSION' });
    // @ts-expect-error this runner registers only v2 (refused at run time too, for untyped callers)
    await expect(onlyV2.start('article', 'x', undefined, { version: 1 })).rejects.toMatchObject({
      code: 'UNKNOWN_VERSION',
    });
    // Both time out at the same moment: the v2 one is handled, then the v1 one is reported.
    now = 86_400_000;
    await expect(onlyV2.processDue(now)).rejects.toMatchObject({ code: 'UNKNOWN_VERSION' });
    expect((await store.load('new'))!.status).toBe('completed');
    expect(await store.load('old')).toEqual(before);
    // A runner that has v1 again finishes it.
    await both.processDue(now);
    expect((await store.load('old'))!).toMatchObject({ status: 'completed', output: { by: 'expire' } });
  });

  it('a changed definition under the same version is refused, never replayed', async () => {
    const store = createMemoryStore();
    const calls: string[] = [];
    const runner = createRunner({
      store,
      workflows: [v1],
      handlers: only(recorder(calls), ...V1),
      clock: () => 0,
    });
    const s = await runner.start('article', 'c-1');
    const edited = workflow('article', 1)
      .task('draft', { handler: 'draft' })
      .wait('approve', { signal: 'approved', timeoutMs: 3_600_000, onTimeout: 'expire' })
      .task('publish', { handler: 'publishV1', end: true })
      .task('expire', { handler: 'expire' })
      .build();
    expect(definitionHash(edited)).not.toBe(definitionHash(v1));
    const sneaky = createRunner({
      store,
      workflows: [edited],
      handlers: only(recorder(calls), ...V1),
      clock: () => 0,
    });
    await expect(sneaky.signal('c-1', 'approved', {})).rejects.toMatchObject({
      code: 'DEFINITION_HASH_MISMATCH',
    });
    expect(await store.load('c-1')).toEqual(s);
    // The pure reducer refuses it the same way.
    expect(() => step(edited, s, { type: 'signal', at: 1, name: 'approved' })).toThrow(
      expect.objectContaining({ code: 'DEFINITION_HASH_MISMATCH' }),
    );
    // Registering both contents as v1 in one runner is refused up front.
    expect(() =>
      createRunner({ store, workflows: [v1, edited], handlers: only(recorder(calls), ...V1) }),
    ).toThrow(expect.objectContaining({ code: 'DEFINITION_HASH_MISMATCH' }));
  });
});
