import type { Snapshot, Store } from '@stepfold/engine';

/**
 * A store whose next load of an instance can be answered from a stream record's image instead of a
 * read: the image is the instance as a write left it, so a tick driven by that record need not
 * read it back. An image that is no longer the newest costs nothing wrong: the tick's conditional
 * write fails with a version conflict, and the runner loads the instance again (from the table).
 */
export interface PrimedStore {
  /** The store to give the runner: every call goes to the wrapped store but a primed load. */
  readonly store: Store;
  /** Answers the next `load(snapshot.id)` with `snapshot` (once). */
  prime(snapshot: Snapshot): void;
  /** Forgets every primed snapshot not loaded yet (at the end of an invocation). */
  clear(): void;
}

/** Wraps `store` so that a primed snapshot answers one load; the runner still checks it as any load. */
export function primedStore(store: Store): PrimedStore {
  const primed = new Map<string, Snapshot>();
  const load = async (id: string) => {
    const s = primed.get(id);
    if (s === undefined) return store.load(id);
    primed.delete(id);
    return s;
  };
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'load') return load;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store: wrapped,
    prime: (snapshot) => primed.set(snapshot.id, snapshot),
    clear: () => primed.clear(),
  };
}
