import { defineWorkflow, type WorkflowDefinition } from '@stepfold/engine';

// The workflows the wake-latency rows time. JSON form: their data paths read signal payloads and
// inputs the bench does not declare types for.

/** Waits for `go`, then runs `hit` with the wall-clock time the signal was sent. */
export const signalProbe: WorkflowDefinition = defineWorkflow({
  name: 'bench-signal',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { sentAt: 'outputs.go.sentAt' } },
  },
});

/** Sleeps until `input.dueAt`, then runs `hit` with that time. */
export const timerProbe: WorkflowDefinition = defineWorkflow({
  name: 'bench-timer',
  version: 1,
  start: 'nap',
  steps: {
    nap: { kind: 'sleep', until: 'input.dueAt', next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { sentAt: 'input.dueAt' } },
  },
});
