import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Mask } from './normalise.js';

// Reading a directory in the recorded-corpus format: `INDEX.json` (or, without it, every folder
// holding a `case.json`), and per case its definition, runs, Lambda results and what AWS recorded.

/** One recorded Lambda invocation. */
export interface RecordedInvocation {
  state: string;
  kind: 'lambda-arn' | 'lambda-invoke';
  resource: string;
  input: unknown;
  result: { output: unknown } | { error: string; cause?: string };
  block?: string;
  note?: string;
}

/** What AWS recorded for a run. */
export interface RecordedOutcome {
  status: 'SUCCEEDED' | 'FAILED' | 'RUNNING';
  output?: unknown;
  error?: string | null;
  cause?: string | null;
  events?: Array<{ type: string; state?: string; index?: number; block?: string; iteration?: number }>;
  stateIO?: unknown[];
}

/** One run of an execution case. */
export interface CaseRun {
  dir: string;
  input: unknown;
  lambdas: RecordedInvocation[];
  expected: RecordedOutcome;
  context: Record<string, unknown>;
  clock?: { start: string } | undefined;
  masks: Mask[];
  normalise: string[];
}

/** A case as read from its folder. */
export interface CorpusCase {
  id: string;
  kind: 'execution' | 'choice-operator';
  levels: { L1: boolean | 'partial'; L2: boolean | 'partial'; L3: boolean | 'partial'; notes?: string };
  /** When AWS ran it (the recorder's local time, `YYYY-MM-DDTHH:MM:SS`), if the case says. */
  recorded?: string | undefined;
  definition?: unknown;
  runs: CaseRun[];
  /** Choice-operator cases: each pair's definition, input and expected output. */
  pairs?: Array<{
    index: number;
    definition: unknown;
    input: unknown;
    expected: { status: string; output: unknown };
  }>;
}

const read = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

/** The case ids of a corpus directory, from `INDEX.json` or by finding every `case.json`. */
export function listCases(root: string): string[] {
  const index = join(root, 'INDEX.json');
  if (existsSync(index)) return (read(index) as { cases: Array<{ id: string }> }).cases.map((c) => c.id);
  const out: string[] = [];
  const walk = (rel: string) => {
    const dir = join(root, rel);
    if (existsSync(join(dir, 'case.json'))) {
      out.push(rel);
      return;
    }
    for (const d of readdirSync(dir, { withFileTypes: true }))
      if (d.isDirectory()) walk(rel ? `${rel}/${d.name}` : d.name);
  };
  walk('');
  return out.sort();
}

/** Reads one case. */
export function readCase(root: string, id: string): CorpusCase {
  const dir = join(root, id);
  const meta = read(join(dir, 'case.json')) as {
    kind: CorpusCase['kind'];
    levels: CorpusCase['levels'];
    recorded?: string;
    runs?: Array<{
      dir: string;
      context?: Record<string, unknown>;
      clock?: { start: string };
      masks?: Mask[];
      normalise?: string[];
    }>;
  };
  if (meta.kind === 'choice-operator') {
    const pairs = (read(join(dir, 'pairs.json')) as { pairs: NonNullable<CorpusCase['pairs']> }).pairs;
    return { id, kind: meta.kind, levels: meta.levels, runs: [], pairs };
  }
  const runs = (meta.runs ?? []).map((r) => {
    const runDir = join(dir, r.dir);
    const lambdasFile = join(runDir, 'lambdas.json');
    return {
      dir: r.dir,
      input: read(join(runDir, 'input.json')),
      lambdas: existsSync(lambdasFile) ? (read(lambdasFile) as RecordedInvocation[]) : [],
      expected: read(join(runDir, 'expected.json')) as RecordedOutcome,
      context: contextWhenRecorded(r.context ?? {}, meta.recorded),
      clock: r.clock,
      masks: r.masks ?? [],
      normalise: r.normalise ?? [],
    };
  });
  return {
    id,
    kind: meta.kind,
    levels: meta.levels,
    recorded: meta.recorded,
    definition: read(join(dir, 'definition.asl.json')),
    runs,
  };
}

/** The day Step Functions added redrive, and with it `$$.Execution.RedriveCount`. */
const REDRIVE_ADDED = '2023-11-15';

/**
 * The context object as it was when the case was recorded: an execution AWS ran before redrive
 * existed had no `Execution.RedriveCount`, though a case's context may list it.
 */
function contextWhenRecorded(context: Record<string, unknown>, recorded: string | undefined) {
  const execution = context['Execution'];
  if (recorded === undefined || recorded.slice(0, 10) >= REDRIVE_ADDED) return context;
  if (execution === null || typeof execution !== 'object' || !('RedriveCount' in execution)) return context;
  const { RedriveCount: _dropped, ...rest } = execution as Record<string, unknown>;
  return { ...context, Execution: rest };
}
