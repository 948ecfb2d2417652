/**
 * The parts of the Workers runtime this package touches, written as the smallest structural types.
 * `@cloudflare/workers-types` and the types `wrangler types` generates both satisfy them, so the
 * package's declarations need neither, and a Node program can import its types too.
 */

/** One Durable Object storage transaction: the calls the store makes inside it. */
export interface StorageTransaction {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A Durable Object's storage (`ctx.storage`): key-value calls, a transaction and the alarm. */
export interface DurableStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
  transaction<T>(closure: (txn: StorageTransaction) => Promise<T>): Promise<T>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A Durable Object's state (`ctx`), as its constructor receives it. */
export interface DurableState {
  readonly storage: DurableStorage;
}

/** A stub of one Durable Object: requests go to its `fetch`. */
export interface DurableStub {
  fetch(request: Request): Promise<Response>;
}

/** A Durable Object namespace binding (`env.WORKFLOWS`), addressed by name. */
export interface DurableNamespace<Id = unknown> {
  idFromName(name: string): Id;
  get(id: Id): DurableStub;
}

/** A Durable Object's SQLite (`ctx.storage.sql`): the calls the flow object makes. */
export interface SqlStorage {
  exec(
    query: string,
    ...bindings: Array<string | number | null>
  ): { toArray(): Array<Record<string, unknown>> };
}

/** The storage of a SQLite-backed Durable Object, as the flow object uses it. */
export interface SqlDurableStorage {
  readonly sql: SqlStorage;
  /** Runs `closure` as one transaction: all of its statements or none. */
  transactionSync<T>(closure: () => T): T;
}

/** A SQLite-backed Durable Object's state (`ctx`). */
export interface SqlDurableState {
  readonly storage: SqlDurableStorage;
}
