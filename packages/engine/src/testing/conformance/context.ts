import type { Store } from '../../store/store.js';

export { canonicalJson } from '../../content-hash.js';

/** Controls a server the suite may stop and start; the store passed is the one `createStore` made. */
export interface OutageControl {
  /** A new, empty store on a server no other test uses (it is stopped mid-test). */
  createStore(): Store | Promise<Store>;
  /** Makes the server unreachable (stop the process, or flip a switch for in-process stores). */
  stop(store: Store): Promise<void>;
  /** Brings the server back on the same address. */
  start(store: Store): Promise<void>;
}

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Shown in the test names, e.g. `postgres`. */
  name: string;
  /** A new, empty store isolated from every other one (own table, collection or key prefix). */
  createStore(): Store | Promise<Store>;
  /** Drops what `createStore` made; called once per store after the suite. */
  destroyStore?(store: Store): Promise<void>;
  /** The store claims the ids `listDue` returns, so concurrent pollers get disjoint batches. */
  claimsDue?: boolean;
  /** The store has `claimDue` (claim and load in one call): test it. */
  claimDue?: boolean;
  /** The store sends wake notices (`store.wakes`): test them. */
  wakes?: boolean;
  /** The store has an inbox for `runner.send` (`send`, `claimSent`, `dropSent`, consuming saves) and wake notices: test it with workers. */
  sent?: boolean;
  /** Stop and restart the server mid-test; omit only for stores without a server. */
  outage?: OutageControl;
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
