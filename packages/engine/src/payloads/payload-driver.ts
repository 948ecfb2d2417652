// The narrow calls a payload store adapter writes: each one (or a few) database round trips, its
// arguments already checked by `definePayloadStore`, which turns them into a `PayloadStore`.

/** A body checked for writing: its owner, hash, text and UTF-8 size. */
export interface PayloadBody {
  /** A valid id. */
  owner: string;
  /** 64 lowercase hex digits: the SHA-256 of `body` (checked). */
  sha256: string;
  /** Well-formed UTF-16 text without NUL characters, at most the store's `maxPayloadBytes` in UTF-8. */
  body: string;
  /** UTF-8 bytes of `body`. */
  bytes: number;
}

/** An adapter's database calls, for {@link definePayloadStore}. */
export interface PayloadDriver {
  /** Creates what the store needs (table, index); safe to run any number of times. */
  setup(): Promise<void>;
  /** Stores the body unless the pair is there already; never fails because it is (racing puts included). */
  put(payload: PayloadBody): Promise<void>;
  /** The stored body, or null (also for one only partly written). */
  get(owner: string, sha256: string): Promise<string | null>;
  /**
   * Up to `limit` hashes of `owner`'s payloads greater than `after` (all when null), in ascending
   * order. The kit asks for one more than the page size to learn whether another page follows.
   */
  list(owner: string, after: string | null, limit: number): Promise<string[]>;
  /** Removes these payloads of `owner` (distinct hashes, at least one); resolves with how many existed. */
  delete(owner: string, sha256s: readonly string[]): Promise<number>;
  /** Removes every payload of exactly `owner`; resolves with how many existed. */
  deleteOwner(owner: string): Promise<number>;
  /** Releases what the adapter opened itself (never the caller's client). */
  close?(): Promise<void>;
}

/** What {@link definePayloadStore} needs to know about the database besides its calls. */
export interface PayloadStoreDefinition {
  /** Shown in `STORE_UNAVAILABLE` messages, e.g. `postgres payloads`. */
  name: string;
  /** True for a driver error that means the server is unreachable (see `isNetworkError`). */
  isUnavailable(error: unknown): boolean;
  /**
   * The body size limit: what the user asked, the adapter's default (default
   * `DEFAULT_MAX_PAYLOAD_BYTES`, 16 MiB), the most the database holds (default: the default).
   */
  sizes: { asked: number | undefined; fallback?: number | undefined; most?: number | undefined };
}
