import { createHash } from 'node:crypto';
import { composition, createHarness, type Snapshot } from '@stepfold/engine';
import { fromAsl } from '../from-asl.js';
import { aslHandlers } from '../handler.js';
import { type AslHistory, AslTrace } from '../trace.js';
import { compareEvents, compareStateIO } from './compare-history.js';
import type { CaseRun, CorpusCase } from './corpus.js';
import { normaliseCause, normaliseValue, sameJson } from './normalise.js';
import { standIns } from './replay.js';

// One case through the harness: import, run each execution with the recorded input, context and
// clock, Lambda stand-ins in replay mode, then compare the result with what AWS recorded (L1).

/** A level's verdict. */
export type Verdict = 'pass' | 'fail' | 'n/a';

/** The verdicts of one case, with why the first failure failed. */
export interface CaseResult {
  case: string;
  l1: Verdict;
  l2: Verdict;
  l3: Verdict;
  reason?: string;
}

const HASHES: Record<string, string> = {
  MD5: 'md5',
  'SHA-1': 'sha1',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};

/** `States.Hash` with node's crypto. */
function hash(algorithm: string, data: string): string {
  const name = HASHES[algorithm];
  if (!name) throw new Error(`hash algorithm ${algorithm} is not supported`);
  return createHash(name).update(data).digest('hex');
}

/** The outcome of one execution in the harness. */
interface Outcome {
  status: Snapshot['status'];
  output?: unknown;
  error?: string | null;
  cause?: string;
  problems: string[];
  history: AslHistory;
}

async function execute(
  definition: unknown,
  run: Pick<CaseRun, 'input' | 'lambdas' | 'context' | 'clock' | 'masks'>,
): Promise<Outcome> {
  const imported = fromAsl(definition, { name: 'asl-case' });
  const stand = standIns(run.lambdas, run.masks);
  const trace = new AslTrace();
  const start = clockStart(run);
  const h = createHarness(imported.definition, {
    workflows: imported.workflows,
    kinds: [composition],
    now: start,
    maxTransitions: 100_000,
  });
  const handlers = aslHandlers(imported, {
    resources: stand.resources,
    invoke: 'envelope',
    context: () => run.context,
    now: () => h.now,
    hash,
    random: () => 1,
    trace: trace.record,
  });
  h.start(run.input as never);
  await h.run(handlers as never, { timers: 'advance', maxRounds: 100_000 });
  const s = h.snapshot as Snapshot;
  const unused = stand.unused();
  const problems = [...stand.problems];
  if (unused.length)
    problems.push(`${unused.length} recorded Lambda call(s) not made, first of ${unused[0]!.state}`);
  return {
    status: s.status,
    output: s.output,
    error: s.error?.code ?? null,
    cause: s.error?.message ?? '',
    problems,
    history: trace.history(
      s.status === 'completed' ? 'succeeded' : s.status === 'failed' ? 'failed' : undefined,
    ),
  };
}

function clockStart(run: Pick<CaseRun, 'clock' | 'context'>): number {
  if (run.clock?.start) return Date.parse(run.clock.start);
  const t = ((run.context['Execution'] ?? {}) as { StartTime?: unknown }).StartTime;
  const ms = typeof t === 'string' ? Date.parse(t) : Number.NaN;
  return Number.isFinite(ms) ? ms : Date.UTC(2024, 0, 1);
}

/** L1 of one execution: status, then the output or the error and cause. Returns why it fails, or undefined. */
function compareL1(run: CaseRun, got: Outcome): string | undefined {
  const want = run.expected;
  const status = got.status === 'completed' ? 'SUCCEEDED' : got.status === 'failed' ? 'FAILED' : 'RUNNING';
  if (status !== want.status)
    return `status ${status} (${got.error ?? ''}: ${(got.cause ?? '').slice(0, 300)}), recorded ${want.status}`;
  if (got.problems.length) return got.problems[0];
  if (status === 'SUCCEEDED') {
    const output = normaliseValue(got.output, run.masks);
    if (!sameJson(output, want.output))
      return `output ${JSON.stringify(output).slice(0, 300)}, recorded ${JSON.stringify(want.output).slice(0, 300)}`;
  }
  if (status === 'FAILED') {
    if ((got.error ?? null) !== (want.error ?? null)) return `error ${got.error}, recorded ${want.error}`;
    const cause = normaliseCause(got.cause ?? '', run.normalise, run.masks);
    const expected = normaliseCause(want.cause ?? '', run.normalise);
    if (cause !== expected)
      return `cause ${JSON.stringify(cause).slice(0, 400)}, recorded ${JSON.stringify(expected).slice(0, 400)}`;
  }
  return undefined;
}

/** Runs one case (every run, or every pair) and returns its verdicts. */
export async function runCase(c: CorpusCase): Promise<CaseResult> {
  const result: CaseResult = { case: c.id, l1: 'pass', l2: 'n/a', l3: 'n/a' };
  const reasons: string[] = [];
  try {
    if (c.kind === 'choice-operator') {
      for (const p of c.pairs ?? []) {
        const run: CaseRun = {
          dir: '.',
          input: p.input,
          lambdas: [],
          expected: p.expected as CaseRun['expected'],
          context: {},
          masks: [],
          normalise: [],
        };
        const why = compareL1(run, await execute(p.definition, run));
        if (why) return { ...result, l1: 'fail', reason: `pair ${p.index}: ${why}` };
      }
      return result;
    }
    const dropParallelSucceeded = JSON.stringify(c.levels.notes ?? '').includes(
      'Drop ParallelStateSucceeded',
    );
    if (c.levels.L2 === true) result.l2 = 'pass';
    if (c.levels.L3 !== false) result.l3 = 'pass';
    for (const run of c.runs) {
      const got = await execute(c.definition, run);
      const tag = c.runs.length > 1 ? `run ${run.dir}: ` : '';
      const l1 = compareL1(run, got);
      if (l1 && result.l1 === 'pass') {
        result.l1 = 'fail';
        reasons.push(`L1 ${tag}${l1}`);
      }
      if (result.l2 === 'pass') {
        const why = compareEvents(got.history.events, run.expected.events ?? [], {
          dropParallelSucceeded,
          prefix: run.expected.status === 'RUNNING',
        });
        if (why) {
          result.l2 = 'fail';
          reasons.push(`L2 ${tag}${why}`);
        }
      }
      if (result.l3 === 'pass') {
        const why = compareStateIO(
          got.history.stateIO,
          run.expected.stateIO ?? [],
          run.masks,
          c.levels.L3 === 'partial',
        );
        if (why) {
          result.l3 = 'fail';
          reasons.push(`L3 ${tag}${why}`);
        }
      }
    }
  } catch (e) {
    result.l1 = 'fail';
    reasons.push(`${(e as Error).name}: ${(e as Error).message}`.slice(0, 500));
  }
  return reasons.length ? { ...result, reason: reasons.join(' | ') } : result;
}
