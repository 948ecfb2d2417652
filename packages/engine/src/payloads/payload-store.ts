// The contract of a payload store: where values too large for a snapshot live, by owner (the
// instance id) and content hash. Each store package has one (PostgreSQL, Redis, MongoDB,
// DynamoDB) and the conformance suite's payload part runs it against the real server.

/** One page of {@link PayloadStore.list}: hashes of an owner's payloads, `cursor` null on the last page. */
export interface PayloadPage {
  items: string[];
  cursor: string | null;
}

/**
 * Persistence for large values, content-addressed within an owner: `(owner, sha256)` names one
 * immutable body (the JSON text of a value). Puts are idempotent, so a retried upload stores
 * nothing twice; deleting an owner collects everything it stored. Owners are instance ids
 * (validated like them); hashes are 64 lowercase hex digits.
 */
export interface PayloadStore {
  /** Largest body (UTF-8 bytes) this store accepts; `PAYLOAD_TOO_LARGE` above it. */
  readonly maxPayloadBytes: number;
  /** Creates tables, indexes or collections; safe to run any number of times. */
  setup(): Promise<void>;
  /**
   * Stores `body` under `(owner, sha256)`. The caller computed the hash; the store may check it
   * (`INVALID_INPUT` on a mismatch). Storing the same pair again is a no-op, concurrently too.
   */
  put(owner: string, sha256: string, body: string): Promise<void>;
  /** The body stored under `(owner, sha256)`, or null. */
  get(owner: string, sha256: string): Promise<string | null>;
  /** The hashes an owner has stored, ordered, paged by cursor. */
  list(owner: string, page: { limit: number; cursor?: string | null | undefined }): Promise<PayloadPage>;
  /** Removes the given payloads of `owner` (missing ones are skipped); resolves with how many went. */
  delete(owner: string, sha256s: readonly string[]): Promise<number>;
  /** Removes every payload of `owner`, and only that owner's (not one whose id merely starts with it). */
  deleteOwner(owner: string): Promise<number>;
  /** Releases what the adapter opened itself (never the caller's client). */
  close(): Promise<void>;
}
