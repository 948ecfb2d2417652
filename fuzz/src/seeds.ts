import { readFileSync } from 'node:fs';
import {
  type DefinitionInput,
  defineWorkflow,
  type Handler,
  type WorkflowDefinition,
  workflow,
} from '@stepfold/engine';

// The valid starting points the targets mutate: definitions covering every step kind (as JSON,
// the form a file or a store gives, and as builder output), the repository's JSON example, and the
// handlers a runner over them needs.

const order = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1000, factor: 2, maxMs: 10_000, jitter: 0.2 } },
})
  .task('reserve', { handler: 'reserve', compensate: 'release', timeoutMs: 30_000 })
  .task('charge', { handler: 'charge', compensate: 'refund', input: { amount: 'input.amount' } })
  .task('email', { handler: 'email' })
  .build();

const approval = workflow('approval', 1)
  .task('draft', { handler: 'draft' })
  .wait('approve', { signal: 'approved', timeoutMs: 60_000, onTimeout: 'expire' })
  .sleep('cool', { ms: 5_000 })
  .task('ship', { handler: 'ship', end: true })
  .task('expire', { handler: 'expire' })
  .build();

/** One step of (nearly) every kind, as JSON. */
const everyKind: DefinitionInput = {
  name: 'every-kind',
  version: 3,
  start: 't',
  onFailure: 'compensate',
  acceptUnknownSignals: false,
  limits: { inbox: 50, log: 100, signalIds: 20 },
  steps: {
    t: {
      kind: 'task',
      handler: 'work',
      compensate: 'undo',
      input: { n: 'input.n', all: 'input' },
      next: 'c',
    },
    c: {
      kind: 'choice',
      branches: [
        { when: { exists: 'input.skip' }, next: 'sv' },
        { when: { '>': [{ var: 'input.n' }, 10] }, next: 'sl' },
      ],
      otherwise: 'p',
    },
    p: { kind: 'parallel', branches: ['w', 'hu'], join: { atLeast: 1 }, next: 'sl' },
    w: { kind: 'wait', signal: 'go', timeoutMs: 3_600_000 },
    hu: { kind: 'human', timeoutMs: 86_400_000, onTimeout: 'f' },
    sl: { kind: 'sleep', ms: 5000, next: 'co' },
    co: { kind: 'collect', signal: 'item', maxItems: 3, idleMs: 60_000, next: 'sv' },
    sv: { kind: 'savepoint', next: 'again' },
    again: { kind: 'choice', branches: [{ when: { var: 'input.loop' }, next: 'can' }], otherwise: 'ok' },
    can: { kind: 'continueAsNew' },
    ok: { kind: 'succeed', output: { n: 'input.n', t: 'outputs.t' } },
    f: { kind: 'fail', error: { message: 'nobody answered', code: 'NO_ANSWER' } },
  },
};

/** Steps as a list, with retries, a dlq policy, a pivot and a time-out path. */
const listForm: DefinitionInput = {
  name: 'list-form',
  version: 1,
  start: 'a',
  onFailure: 'dlq',
  defaults: { retry: { maxAttempts: 2, initialMs: 10 }, timeoutMs: 5000 },
  steps: [
    { id: 'a', kind: 'task', handler: 'work', retry: { maxAttempts: 3, nonRetryable: ['BAD'] }, next: 'b' },
    { id: 'b', kind: 'task', handler: 'work', pivot: true, onFailure: 'fail', next: 'w' },
    { id: 'w', kind: 'wait', signal: 'go', timeoutMs: 1000, onTimeout: 'late', next: 'done' },
    { id: 'late', kind: 'fail', error: { message: 'late' } },
    { id: 'done', kind: 'succeed' },
  ],
};

/** A child workflow and a parent with a child step and both kinds of map. */
const line: DefinitionInput = {
  name: 'line',
  version: 1,
  start: 'pick',
  steps: { pick: { kind: 'task', handler: 'work', compensate: 'undo' } },
};
const composed: DefinitionInput = {
  name: 'composed',
  version: 1,
  start: 'sub',
  steps: {
    sub: { kind: 'child', workflow: 'line', input: { n: 'input.n' }, timeoutMs: 60_000, next: 'lines' },
    lines: {
      kind: 'map',
      items: 'input.lines',
      workflow: 'line',
      maxConcurrency: 3,
      tolerated: { count: 1 },
      next: 'sums',
    },
    sums: {
      kind: 'map',
      items: 'input.numbers',
      handler: 'work',
      maxConcurrency: 2,
      retry: { maxAttempts: 2 },
    },
  },
};

/** The expense claim of examples/cli (human step, dlq, wait), read as a user's file would be. */
function expense(): DefinitionInput {
  const url = new URL('../../examples/cli/expense.json', import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as DefinitionInput;
}

/** Every seed definition as JSON (builder output serialized the way a file would hold it). */
export function seedJson(): DefinitionInput[] {
  const json = (d: unknown) => JSON.parse(JSON.stringify(d)) as DefinitionInput;
  return [json(order), json(approval), everyKind, listForm, line, composed, expense()];
}

/** Every seed, defined (the composition entry must be loaded for `composed`). */
export function seedDefinitions(): WorkflowDefinition[] {
  return seedJson().map((d) => defineWorkflow(d));
}

/** Handlers for every name the seeds use: each returns at once (hand-off runners never call them). */
export function seedHandlers(): Record<string, Handler> {
  const names = [
    'reserve',
    'release',
    'charge',
    'refund',
    'email',
    'draft',
    'ship',
    'expire',
    'work',
    'undo',
  ];
  const out: Record<string, Handler> = {
    checkClaim: async () => ({ ok: true }),
    payClaim: async () => ({ paid: true }),
  };
  for (const n of names) out[n] = async () => ({ n });
  return out;
}

/** Inputs that take each seed down its interesting paths. */
export const SEED_INPUTS: readonly unknown[] = [
  { amount: 3, n: 2, lines: [1, 2], numbers: [1, 2, 3] },
  { n: 20, skip: true },
  { loop: true, n: 1, lines: [], numbers: [] },
  {},
  null,
];
