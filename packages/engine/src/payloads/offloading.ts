import { PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
import type { RunnerCodec } from '../runner/codec-port.js';
import type { RunTask } from '../runner/execute-task.js';
import type { PayloadPort, RunnerPayloads } from '../runner/payload-port.js';
import type { Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';
import { snapshotBytes } from '../store/store.js';
import { textDigest } from '../store/text-digest.js';
import { checkPatch, offloadPatch, offloadTask } from './offload-task.js';
import type { PayloadStore } from './payload-store.js';
import { fetchPayload, hasPayloadRefs, Resolver } from './payload-walk.js';

/** Options of {@link offloading}. */
export interface OffloadingOptions {
  /** Where offloaded values go. */
  store: PayloadStore;
  /**
   * UTF-8 bytes of a value's JSON above which it is offloaded (default: the smaller of 64 KiB and
   * an eighth of the snapshot store's `maxSnapshotBytes`).
   */
  threshold?: number | undefined;
}

/** What {@link offloading} returns: the runner's `payloads` option, and the payload store it writes to. */
export interface Offloading extends RunnerPayloads {
  readonly store: PayloadStore;
}

/** The default threshold for a snapshot store: 64 KiB, or an eighth of its item limit if smaller. */
export function defaultThreshold(snapshots: Pick<Store, 'maxSnapshotBytes'>): number {
  return Math.min(64 * 1024, Math.floor(snapshots.maxSnapshotBytes / 8));
}

/**
 * Payload offloading for a runner (claim check): a start input, handler output, signal payload or
 * requeue patch value whose JSON is over the threshold is stored in `store` under (instance id,
 * SHA-256 of the JSON) and the snapshot keeps a {@link PayloadRef} — with the top-level fields the
 * step's `offload.keep` names, which conditions can read. Handlers, `runner.get` and child inputs
 * see resolved values; the reducer never sees a body. Whole values only: a value under the
 * threshold stays inline even when a snapshot holds many of them.
 *
 * @example
 * const runner = createRunner({
 *   store, workflows: [report], handlers,
 *   payloads: offloading({ store: createMemoryPayloadStore(), threshold: 64 * 1024 }),
 * });
 */
export function offloading(options: OffloadingOptions): Offloading {
  const { store, threshold } = options;
  if (threshold !== undefined && !(Number.isSafeInteger(threshold) && threshold >= 0))
    throw new RangeError('threshold must be a non-negative integer');
  return {
    store,
    bind: (snapshots, codec) => new Offloader(store, threshold ?? defaultThreshold(snapshots), codec),
  };
}

/** The {@link PayloadPort} a runner gets from {@link offloading}. */
class Offloader implements PayloadPort {
  constructor(
    private readonly payloads: PayloadStore,
    private readonly threshold: number,
    /** The runner's codec: bodies are stored encoded, and hashed as stored. */
    private readonly codec?: RunnerCodec | undefined,
  ) {}

  async offload(owner: string, value: unknown, keep?: readonly string[] | false): Promise<unknown> {
    if (keep === false || value === undefined || value === null) return value;
    // Objects, arrays and long strings; a number or boolean is never over a sensible threshold.
    if (typeof value !== 'object' && typeof value !== 'string') return value;
    let json = JSON.stringify(value);
    // UTF-8 takes 1–3 bytes per UTF-16 unit: most values are decided without counting.
    if (json.length * 3 <= this.threshold) return value;
    if (json.length <= this.threshold && snapshotBytes(json) <= this.threshold) return value;
    // A body never holds references (so collecting reads only snapshots): resolve any first.
    if (json.includes(PAYLOAD_REF)) {
      value = await this.resolve(value);
      json = JSON.stringify(value);
    }
    const body = this.codec ? await this.codec.sealBody(json) : json;
    const sha256 = await textDigest(body, 'SHA-256');
    await this.payloads.put(owner, sha256, body);
    const ref: PayloadRef = { $ref: PAYLOAD_REF, owner, sha256, bytes: snapshotBytes(json) };
    const kept = keep?.length ? keptFields(value, keep) : undefined;
    if (kept) ref.keep = kept;
    return ref;
  }

  task(run: RunTask): RunTask {
    return offloadTask(this, run);
  }

  async message<M extends { type: string; id: string }>(m: M): Promise<M> {
    const { type, id, payload, inputPatch } = m as M & {
      payload?: unknown;
      inputPatch?: Record<string, unknown>;
    };
    if (type === 'signal') return { ...m, payload: await this.offload(id, payload) };
    if (type === 'requeue' && inputPatch)
      return { ...m, inputPatch: await offloadPatch(this, id, inputPatch) };
    return m;
  }

  checkPatch(current: Snapshot): Promise<void> {
    return checkPatch(current);
  }

  resolve<T>(value: T): Promise<T> {
    return new Resolver(this.payloads, this.codec).resolve(value);
  }

  async resolveData(s: Snapshot): Promise<Snapshot> {
    const outputs = Object.entries(s.steps).filter(([, st]) => hasPayloadRefs(st.output));
    if (!outputs.length && !hasPayloadRefs(s.input)) return s;
    // One resolver for the attempt: a payload referenced twice is fetched once.
    const r = new Resolver(this.payloads, this.codec);
    const steps = { ...s.steps };
    await Promise.all(
      outputs.map(async ([id, st]) => {
        steps[id] = { ...st, output: await r.resolve(st.output) };
      }),
    );
    return { ...s, input: await r.resolve(s.input), steps };
  }

  async rehome<T>(owner: string, value: T): Promise<T> {
    if (!hasPayloadRefs(value)) return value;
    const foreign = (v: unknown): boolean =>
      typeof v === 'object' &&
      v !== null &&
      (v as PayloadRef).$ref === PAYLOAD_REF &&
      (v as PayloadRef).owner !== owner;
    const walk = async (v: unknown): Promise<unknown> => {
      if (typeof v !== 'object' || v === null || !hasPayloadRefs(v)) return v;
      if (foreign(v)) {
        const ref = v as PayloadRef;
        // The same body under the new owner: same hash, same kept fields.
        const body = await fetchPayload(this.payloads, ref);
        const json = this.codec ? await this.codec.openBody(body) : body;
        if (json.includes(PAYLOAD_REF)) {
          const keep = ref.keep ? Object.keys(ref.keep) : undefined;
          return this.offload(owner, await this.resolve(JSON.parse(json)), keep);
        }
        await this.payloads.put(owner, ref.sha256, body);
        return { ...ref, owner };
      }
      if ((v as PayloadRef).$ref === PAYLOAD_REF) return v;
      if (Array.isArray(v)) return Promise.all(v.map(walk));
      return Object.fromEntries(
        await Promise.all(Object.entries(v).map(async ([k, x]) => [k, await walk(x)])),
      );
    };
    return (await walk(value)) as T;
  }
}

/** The top-level fields of `value` that `keep` names (those it has), as own data properties. */
function keptFields(value: unknown, keep: readonly string[]): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keep)
    if (Object.hasOwn(value, k))
      Object.defineProperty(out, k, {
        value: (value as Record<string, unknown>)[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return out;
}
