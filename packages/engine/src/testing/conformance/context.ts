import type { Store } from '../../store/store.js';

export { canonicalJson } from '../../content-hash.js';

/** A store capability the suite has a part for. */
export type Capability = 'claims' | 'inbox' | 'wakes' | 'flow' | 'stream';

/** Controls a server the suite may stop and start; the store passed is the one `createStore` made. */
export interface OutageControl {
  /** A new, empty store on a server no other test uses (it is stopped mid-test). */
  createStore(): Store | Promise<Store>;
  /** Makes the server unreachable (stop the process, or flip a switch for in-process stores). */
  stop(store: Store): Promise<void>;
  /** Brings the server back on the same address. */
  start(store: Store): Promise<void>;
}

/**
 * Spoils what `store` holds for instance `id` as a torn write or a bad hand edit would, behind the
 * store's back: its stored snapshot (`snapshot`: text that is not JSON) or the stored events of the
 * signals waiting for it (`sent`).
 */
export type Corrupt = (store: Store, id: string, what: 'snapshot' | 'sent') => Promise<void>;

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Shown in the test names, e.g. `postgres`. */
  name: string;
  /** A new, empty store isolated from every other one (own table, collection or key prefix). */
  createStore(): Store | Promise<Store>;
  /** Drops what `createStore` made; called once per store after the suite. */
  destroyStore?(store: Store): Promise<void>;
  /**
   * The capabilities the store has (`store.claims`, `store.inbox`, `store.wakes`, `store.flow`, `store.stream`): the suite checks
   * the store has exactly these, and runs each one's part.
   */
  capabilities: readonly Capability[];
  /**
   * Another store object over the same database as `store` (same table, prefix or collection),
   * with connections of its own where it can: the flow part races acquirers across both, the
   * stream part appenders and tails. Omit for
   * a store that cannot be opened twice (the in-memory one). Closed, not destroyed, after the suite.
   */
  reopen?(store: Store): Store | Promise<Store>;
  /** Stop and restart the server mid-test; omit only for stores without a server. */
  outage?: OutageControl;
  /** Spoils a stored row (see {@link Corrupt}); given, the suite checks that claims report such rows and return the rest. */
  corrupt?: Corrupt;
  /**
   * Whether the store hands out due work round-robin across fairness keys (`Snapshot.fairKey`,
   * see `Store.listDue`); default true. False skips the fairness part, for a store that still
   * returns due work earliest first whatever the keys.
   */
  fairness?: boolean;
  /**
   * Whether the store's due order counts priorities (`Snapshot.priority`: work due at once indexed
   * that many seconds earlier, as the store kit's encoding gives every store made by `defineStore`);
   * default true. False skips the priority part, for a store that indexes `wakeAt` as it is.
   */
  priority?: boolean;
  /**
   * Whether `delete` releases the flow slots the instance held (every store made by `defineStore`
   * with flow calls does); default true. False skips that test of the flow part, for a suite whose
   * instances live in another store than its counters.
   */
  deleteReleasesFlow?: boolean;
  /** Writers racing on one instance (default 16). */
  writers?: number;
  /** Rounds of that race (default 200). */
  rounds?: number;
}

/** What each part of the suite gets: the options and a way to open a fresh, set-up store. */
export interface SuiteContext {
  options: StoreConformanceOptions;
  /** A new empty store with `setup()` done; closed and destroyed after the suite. */
  fresh(): Promise<Store>;
  /** `options.reopen(store)` with `setup()` done (closed after the suite), or `store` itself without it. */
  twin(store: Store): Promise<Store>;
}

/** Retries `fn` every 250 ms until it resolves, for about `ms`; rethrows the last error. */
export async function eventually<T>(fn: () => Promise<T>, ms: number): Promise<T> {
  for (let tries = Math.ceil(ms / 250); ; tries--) {
    try {
      return await fn();
    } catch (e) {
      if (tries <= 0) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Polls `ok` every 20 ms until it holds; throws naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await ok()) return;
  throw new Error(`timed out waiting for ${what}`);
}
