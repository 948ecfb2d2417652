import type { PayloadStore } from '../../payloads/payload-store.js';

/** Controls a server the payload suite may stop and start; the store passed is the one `createStore` made. */
export interface PayloadOutageControl {
  /** A new, empty payload store on a server no other test uses (it is stopped mid-test). */
  createStore(): PayloadStore | Promise<PayloadStore>;
  /** Makes the server unreachable (stop the process, or flip a switch for in-process stores). */
  stop(store: PayloadStore): Promise<void>;
  /** Brings the server back on the same address. */
  start(store: PayloadStore): Promise<void>;
}

/** Options of {@link runPayloadStoreConformance}. */
export interface PayloadStoreConformanceOptions {
  /** Shown in the test names, e.g. `postgres`. */
  name: string;
  /** A new, empty payload store isolated from every other one (own table, collection or key prefix). */
  createStore(): PayloadStore | Promise<PayloadStore>;
  /** Drops what `createStore` made; called once per store after the suite. */
  destroyStore?(store: PayloadStore): Promise<void>;
  /** Stop and restart the server mid-test; omit only for stores without a server. */
  outage?: PayloadOutageControl;
}

/** What each part of the payload suite gets: the options and a way to open a fresh, set-up store. */
export interface PayloadSuiteContext {
  options: PayloadStoreConformanceOptions;
  /** A new empty payload store with `setup()` done; closed and destroyed after the suite. */
  fresh(): Promise<PayloadStore>;
}

/** A JSON string whose UTF-8 text is exactly `bytes` long (at least 2), mixing 1- to 4-byte characters throughout. */
export function jsonOfBytes(bytes: number): string {
  // 9 UTF-8 bytes a unit: every split of the bytes at a fixed size cuts some character in two.
  const unit = 'ü😀✓';
  const inner = bytes - 2;
  const units = Math.floor(inner / 9);
  return `"${unit.repeat(units)}${'x'.repeat(inner - units * 9)}"`;
}
