import { SNAPSHOT_SCHEMA_VERSION, type Snapshot } from '../snapshot.js';
import { snapshotBytes } from '../store/store.js';

/** A minimal valid snapshot for store tests; `patch` overrides any field. */
export function makeTestSnapshot(id: string, patch: Partial<Snapshot> = {}): Snapshot {
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    id,
    workflow: { name: 'conformance', version: 1, hash: 'conformance-hash' },
    version: 1,
    run: 1,
    status: 'running',
    input: null,
    steps: {},
    active: [],
    completed: [],
    tasks: {},
    timers: [],
    inbox: [],
    seenSignals: [],
    wakeAt: null,
    createdAt: 0,
    updatedAt: 0,
    log: [],
    ...patch,
  };
}

/** A snapshot whose JSON is exactly `bytes` UTF-8 bytes long (padding goes into `input`). */
export function snapshotOfSize(id: string, bytes: number, patch: Partial<Snapshot> = {}): Snapshot {
  const base = makeTestSnapshot(id, { ...patch, input: '' });
  const fixed = snapshotBytes(JSON.stringify(base));
  if (bytes < fixed) throw new RangeError(`a snapshot needs at least ${fixed} bytes`);
  return { ...base, input: 'x'.repeat(bytes - fixed) };
}
