import type { Snapshot } from '@stepfold/engine';

/** A minimal valid snapshot of workflow `conformance`; `patch` overrides any field. */
export function makeTestSnapshot(id: string, patch: Partial<Snapshot> = {}): Snapshot {
  return {
    schemaVersion: 1,
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
