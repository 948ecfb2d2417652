import { listCases, readCase } from './corpus.js';
import { type CaseResult, runCase } from './run-case.js';

// `@stepfold/asl/conformance`: replays a directory of recorded Step Functions executions (the
// corpus format: INDEX.json, and per case its definition, runs, Lambda results and the recorded
// outcome) through the importer and the harness, and reports each case's levels.

export type { CaseRun, CorpusCase, RecordedInvocation, RecordedOutcome } from './corpus.js';
export { listCases, readCase } from './corpus.js';
export { type Mask, normaliseCause, normaliseValue, sameJson } from './normalise.js';
export { ReplayMismatch, type StandIns, standIns } from './replay.js';
export { type CaseResult, runCase, type Verdict } from './run-case.js';

/** Counts of each verdict per level. */
export interface ConformanceSummary {
  cases: number;
  l1: Record<'pass' | 'fail' | 'n/a', number>;
  l2: Record<'pass' | 'fail' | 'n/a', number>;
  l3: Record<'pass' | 'fail' | 'n/a', number>;
}

/** Options of {@link runConformance}. */
export interface ConformanceOptions {
  /** Only the cases whose id this accepts. */
  filter?: (id: string) => boolean;
  /** Called with each case's result as it is known. */
  onCase?: (result: CaseResult) => void;
}

/**
 * Replays every case of a corpus directory and returns each case's verdicts and the summary.
 *
 * @example
 * const { summary } = await runConformance('../shared/asl', { onCase: (r) => console.log(JSON.stringify(r)) });
 */
export async function runConformance(
  dir: string,
  options: ConformanceOptions = {},
): Promise<{ results: CaseResult[]; summary: ConformanceSummary }> {
  const results: CaseResult[] = [];
  for (const id of listCases(dir)) {
    if (options.filter && !options.filter(id)) continue;
    const r = await runCase(readCase(dir, id));
    results.push(r);
    options.onCase?.(r);
  }
  return { results, summary: summarise(results) };
}

/** Counts the verdicts of a list of case results. */
export function summarise(results: readonly CaseResult[]): ConformanceSummary {
  const zero = () => ({ pass: 0, fail: 0, 'n/a': 0 });
  const summary: ConformanceSummary = { cases: results.length, l1: zero(), l2: zero(), l3: zero() };
  for (const r of results) {
    summary.l1[r.l1]++;
    summary.l2[r.l2]++;
    summary.l3[r.l3]++;
  }
  return summary;
}
