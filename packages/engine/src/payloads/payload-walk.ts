import { isPayloadRef, PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
import type { RunnerCodec } from '../runner/codec-port.js';
import { textDigest } from '../store/text-digest.js';
import { PayloadNotFoundError } from './payload-errors.js';
import type { PayloadStore } from './payload-store.js';

// Finding and resolving references anywhere in JSON data (a snapshot, an output, a body).

/** Every payload reference in `value` (depth first; a reference's own fields are not searched). */
export function payloadRefs(value: unknown, out: PayloadRef[] = []): PayloadRef[] {
  if (typeof value !== 'object' || value === null) return out;
  if (isPayloadRef(value)) {
    out.push(value);
    return out;
  }
  for (const v of Array.isArray(value) ? value : Object.values(value)) payloadRefs(v, out);
  return out;
}

/** Whether `value` holds a payload reference anywhere (stops at the first). */
export function hasPayloadRefs(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (isPayloadRef(value)) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (hasPayloadRefs(v)) return true;
  return false;
}

/**
 * The body of `ref`, checked against its hash: `PAYLOAD_NOT_FOUND` (not retryable) if it is
 * missing or corrupt; an unreachable payload store's error as it is (retryable).
 */
export async function fetchPayload(payloads: PayloadStore, ref: PayloadRef): Promise<string> {
  const body = await payloads.get(ref.owner, ref.sha256);
  if (body === null || (await textDigest(body, 'SHA-256')) !== ref.sha256)
    throw new PayloadNotFoundError(ref.owner, ref.sha256);
  return body;
}

/**
 * Resolves references with one fetch per payload however often it is referenced (a resolver is
 * made per handler attempt or per `get`, so nothing outlives the call).
 */
export class Resolver {
  private readonly seen = new Map<string, Promise<unknown>>();

  constructor(
    private readonly payloads: PayloadStore,
    /** Decodes bodies stored through a codec. */
    private readonly codec?: Pick<RunnerCodec, 'openBody'> | undefined,
  ) {}

  /** `value` with every reference replaced by its value (bodies holding references resolved too); `value` itself if it holds none. */
  async resolve<T>(value: T): Promise<T> {
    return hasPayloadRefs(value) ? ((await this.walk(value)) as T) : value;
  }

  private async walk(value: unknown): Promise<unknown> {
    if (typeof value !== 'object' || value === null) return value;
    if (isPayloadRef(value)) return this.body(value);
    if (!hasPayloadRefs(value)) return value;
    if (Array.isArray(value)) return Promise.all(value.map((v) => this.walk(v)));
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await this.walk(v)] as const),
    );
    // fromEntries defines own properties: a `__proto__` key stays data.
    return Object.fromEntries(entries);
  }

  private body(ref: PayloadRef): Promise<unknown> {
    const key = `${ref.owner}\n${ref.sha256}`;
    let p = this.seen.get(key);
    if (!p) {
      // A body rarely holds references (offloading resolves them first): look before walking it.
      const { codec } = this;
      p = fetchPayload(this.payloads, ref)
        .then((body) => (codec ? codec.openBody(body) : body))
        .then((body) => (body.includes(PAYLOAD_REF) ? this.resolve(JSON.parse(body)) : JSON.parse(body)));
      this.seen.set(key, p);
    }
    return p;
  }
}

/**
 * `value` (a snapshot, say) with every payload reference in it replaced by the value it names, for
 * tools that read snapshots from a store directly (a runner's `get` does it itself); bodies
 * written through a runner's `codec` need that codec.
 *
 * @example
 * const s = await resolvePayloads(await store.load('order-42'), payloadStore);
 */
export function resolvePayloads<T>(
  value: T,
  payloads: PayloadStore,
  codec?: Pick<RunnerCodec, 'openBody'>,
): Promise<T> {
  return new Resolver(payloads, codec).resolve(value);
}
