import type { WorkflowEvent } from '../events.js';
import type { SignalRecord, Snapshot, StepState } from '../snapshot.js';
import { type Codec, type Encoded, isEncoded } from './codec.js';

// Which fields of a snapshot and an event hold the user's data, and encoding them with a codec.
// Snapshots share unchanged objects from one write to the next, so each envelope is remembered
// against the value it holds (an object: the value itself; a string or number: its field in the
// object that held it): a save encodes only what changed since the load or the save before.

/** The free-form data field of each event type that has one (as the event schema lists them). */
const EVENT_DATA: Partial<Record<WorkflowEvent['type'], string>> = {
  start: 'input',
  'task.completed': 'output',
  'task.heartbeat': 'details',
  'child.ended': 'output',
  signal: 'payload',
  requeue: 'inputPatch',
};

type Box = Record<string | number, unknown>;
type Jobs = Promise<void>[];

/** Encodes and decodes the data fields of snapshots and events with one codec, remembering envelopes. */
export class Sealer {
  /** The envelope of each object value encoded or decoded. */
  private readonly byValue = new WeakMap<object, Encoded>();
  /** The envelope of each string, number or boolean, by the object and field that held it. */
  private readonly byField = new WeakMap<object, Map<string | number, { value: unknown; sealed: Encoded }>>();
  /** Object values being encoded now. */
  private readonly pending = new WeakMap<object, Promise<Encoded>>();
  /** The stored snapshot or event each decoded one came from (a notice's `matches` must be compared as stored). */
  private readonly stored = new WeakMap<object, object>();

  constructor(private readonly codec: Codec) {}

  /** A copy of `s` with its data fields encoded (`s` is not changed). */
  async sealSnapshot(s: Snapshot): Promise<Snapshot> {
    const jobs: Jobs = [];
    const out = { ...s };
    this.seal(jobs, out as unknown as Box, 'input', s);
    this.seal(jobs, out as unknown as Box, 'output', s);
    out.steps = this.mapSteps(s.steps, (st, c) => {
      this.seal(jobs, c, 'output', st);
      this.seal(jobs, c, 'heartbeatDetails', st);
      if (st.compensation?.heartbeatDetails !== undefined) {
        const comp = { ...st.compensation };
        c.compensation = comp;
        this.seal(jobs, comp, 'heartbeatDetails', st.compensation);
      }
      if (st.batch?.items.length) {
        const items = [...st.batch.items];
        c.batch = { ...st.batch, items };
        for (let i = 0; i < items.length; i++) this.seal(jobs, items as unknown as Box, i, st.batch.items);
      }
    });
    out.inbox = this.mapInbox(s.inbox, (r, c) => this.seal(jobs, c, 'payload', r));
    await Promise.all(jobs);
    return out;
  }

  /** A copy of the stored `s` with its data fields decoded; `s` itself when none is encoded. */
  async openSnapshot(s: Snapshot): Promise<Snapshot> {
    // What a load admits: anything not shaped like a snapshot is left to its checks.
    if (typeof s !== 'object' || s === null || typeof s.steps !== 'object' || s.steps === null) return s;
    const jobs: Jobs = [];
    const out = { ...s };
    this.open(jobs, out as unknown as Box, 'input');
    this.open(jobs, out as unknown as Box, 'output');
    out.steps = this.mapSteps(s.steps, (st, c) => {
      this.open(jobs, c, 'output');
      this.open(jobs, c, 'heartbeatDetails');
      if (isEncoded(st.compensation?.heartbeatDetails)) {
        const comp = { ...st.compensation! };
        c.compensation = comp;
        this.open(jobs, comp, 'heartbeatDetails');
      }
      if (Array.isArray(st.batch?.items) && st.batch.items.some(isEncoded)) {
        const items = [...st.batch.items];
        c.batch = { ...st.batch, items };
        for (let i = 0; i < items.length; i++) this.open(jobs, items as unknown as Box, i);
      }
    });
    if (Array.isArray(s.inbox)) out.inbox = this.mapInbox(s.inbox, (_, c) => this.open(jobs, c, 'payload'));
    // Nothing encoded (written before the codec was set): as stored, it is itself.
    if (!jobs.length) {
      this.stored.set(s, s);
      return s;
    }
    await Promise.all(jobs);
    this.stored.set(out, s);
    return out;
  }

  /** `e` with its data field encoded (`e` itself if it has none). */
  async sealEvent<E extends WorkflowEvent>(e: E): Promise<E> {
    const field = EVENT_DATA[e.type];
    if (field === undefined || (e as unknown as Box)[field] === undefined) return e;
    const stored = this.stored.get(e);
    if (stored) return stored as E;
    const out = { ...e } as unknown as Box;
    const jobs: Jobs = [];
    this.seal(jobs, out, field, e);
    await Promise.all(jobs);
    return out as unknown as E;
  }

  /** The stored `e` with its data field decoded (`e` itself if it is not encoded). */
  async openEvent<E extends WorkflowEvent>(e: E): Promise<E> {
    const field = typeof e === 'object' && e !== null ? EVENT_DATA[e.type] : undefined;
    if (field === undefined || !isEncoded((e as unknown as Box)[field])) {
      if (typeof e === 'object' && e !== null) this.stored.set(e, e);
      return e;
    }
    const out = { ...e } as unknown as Box;
    const jobs: Jobs = [];
    this.open(jobs, out, field);
    await Promise.all(jobs);
    this.stored.set(out, e);
    return out as unknown as E;
  }

  /** The stored snapshot `s` was decoded from, else `s` encoded (what a conditional save compares with). */
  asStored(s: Snapshot): Promise<Snapshot> {
    const stored = this.stored.get(s) as Snapshot | undefined;
    return stored ? Promise.resolve(stored) : this.sealSnapshot(s);
  }

  /** Queues `target[key]` encoded in place; `holder` held the plaintext (for a primitive's remembered envelope). */
  private seal(jobs: Jobs, target: Box, key: string | number, holder: object): void {
    const value = target[key];
    // `null` says nothing a step's status does not: not worth a cipher call (tens of µs on Node).
    if (value === undefined || value === null || isEncoded(value)) return;
    const known = this.known(holder, key, value);
    if (known) {
      target[key] = known;
      return;
    }
    // One object in two places (a step's output that is also the workflow's) is encoded once.
    const isObject = typeof value === 'object' && value !== null;
    let sealing = isObject ? this.pending.get(value) : undefined;
    if (!sealing) {
      sealing = this.codec.encode(value);
      if (isObject) {
        this.pending.set(value, sealing);
        sealing.then(
          () => this.pending.delete(value),
          () => this.pending.delete(value),
        );
      }
    }
    jobs.push(
      sealing.then((sealed) => {
        this.remember(holder, key, value, sealed);
        target[key] = sealed;
      }),
    );
  }

  /** Queues `target[key]` decoded in place if it is an envelope; the decoded value remembers it. */
  private open(jobs: Jobs, target: Box, key: string | number): void {
    const sealed = target[key];
    if (!isEncoded(sealed)) return;
    jobs.push(
      this.codec.decode(sealed).then((value) => {
        this.remember(target, key, value, sealed);
        target[key] = value;
      }),
    );
  }

  private known(holder: object, key: string | number, value: unknown): Encoded | undefined {
    if (typeof value === 'object' && value !== null) return this.byValue.get(value);
    const last = this.byField.get(holder)?.get(key);
    return last && Object.is(last.value, value) ? last.sealed : undefined;
  }

  private remember(holder: object, key: string | number, value: unknown, sealed: Encoded): void {
    if (typeof value === 'object' && value !== null) {
      this.byValue.set(value, sealed);
      return;
    }
    let fields = this.byField.get(holder);
    if (!fields) {
      fields = new Map();
      this.byField.set(holder, fields);
    }
    fields.set(key, { value, sealed });
  }

  /** `steps` with each step holding data copied and given to `each` (the copy to change); others shared. */
  private mapSteps(
    steps: Record<string, StepState>,
    each: (st: StepState, copy: Box & Partial<StepState>) => void,
  ): Record<string, StepState> {
    let out: Record<string, StepState> | undefined;
    for (const id in steps) {
      const st = steps[id]!;
      if (
        st.output === undefined &&
        st.heartbeatDetails === undefined &&
        st.compensation?.heartbeatDetails === undefined &&
        !st.batch?.items?.length
      )
        continue;
      out ??= { ...steps };
      const copy = { ...st } as Box & StepState;
      each(st, copy);
      out[id] = copy;
    }
    return out ?? steps;
  }

  /** `inbox` with each record holding a payload copied and given to `each`. */
  private mapInbox(inbox: SignalRecord[], each: (r: SignalRecord, copy: Box) => void): SignalRecord[] {
    if (!inbox.some((r) => r.payload !== undefined)) return inbox;
    return inbox.map((r) => {
      if (r.payload === undefined) return r;
      const copy = { ...r } as unknown as Box;
      each(r, copy);
      return copy as unknown as SignalRecord;
    });
  }
}
