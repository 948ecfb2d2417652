import fc from 'fast-check';
import { describe, Finding, restorePrototypes, watchPrototypes, withBudget } from './guard.js';

/**
 * One kind of hostile input: how to open what it runs against (stores, an app), an arbitrary of
 * inputs, and the check of one input, which throws a {@link Finding} (or anything untyped) when
 * the system under test misbehaved.
 */
export interface Target<T = unknown, C = unknown> {
  name: string;
  /** Inputs in a full `pnpm fuzz` run. */
  runs: number;
  /** Needs the database servers (`pnpm services`). */
  servers?: boolean;
  /** Longest one input may take (default 1 000 ms): longer is reported as a hang. */
  budgetMs?: number;
  open(): Promise<C>;
  close?(context: C): Promise<void>;
  arbitrary(context: C): fc.Arbitrary<T>;
  check(input: T, context: C): void | Promise<void>;
}

/** A target of any input and context type, as lists hold them. */
// biome-ignore lint/suspicious/noExplicitAny: a list of targets of different input types
export type AnyTarget = Target<any, any>;

/** A target's run: how many inputs, how long, and the failure if one was found. */
export interface TargetReport {
  target: string;
  runs: number;
  ms: number;
  seed: number;
  failure?: { path: string; message: string; input: string; stack: string } | undefined;
}

/** Options of {@link runTarget}. */
export interface RunOptions {
  runs?: number | undefined;
  seed?: number | undefined;
  /** Replays one input: the path a failure printed. */
  path?: string | undefined;
  /** Called after each input (progress). */
  onInput?: ((n: number) => void) | undefined;
}

/** Errors nobody awaited, raised while an input ran: a crash waiting to happen in a real process. */
const stray: unknown[] = [];
let listening = false;
function listenForStrays(): void {
  if (listening) return;
  listening = true;
  process.on('unhandledRejection', (e) => stray.push(e));
  process.on('uncaughtException', (e) => stray.push(e));
}

/**
 * Runs `target` for `runs` inputs under fast-check: each input is checked by the target, then the
 * built-in prototypes are compared with their state before the run, stray errors collected and the
 * time checked. The first failure is shrunk and reported with the seed and path that replay it.
 */
export async function runTarget<T, C>(target: Target<T, C>, options: RunOptions = {}): Promise<TargetReport> {
  listenForStrays();
  const context = await target.open();
  const budget = target.budgetMs ?? 1000;
  const watch = watchPrototypes();
  let n = 0;
  const property = fc.asyncProperty(target.arbitrary(context), async (input) => {
    const started = performance.now();
    stray.length = 0;
    try {
      await withBudget(
        Promise.resolve().then(() => target.check(input, context)),
        budget * 5,
        target.name,
      );
    } finally {
      const changed = watch.changes();
      if (changed.length) {
        restorePrototypes();
        // biome-ignore lint/correctness/noUnsafeFinally: the pollution is the finding, whatever else happened
        throw new Finding(`a built-in prototype changed: ${changed.join('; ')}`);
      }
    }
    const ms = performance.now() - started;
    if (ms > budget) throw new Finding(`took ${Math.round(ms)} ms (over ${budget} ms: a hang)`);
    if (stray.length) throw new Finding(`an error nobody awaited: ${describe(stray[0])}`);
    options.onInput?.(++n);
  });
  const seed = options.seed ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const started = performance.now();
  const details = await fc.check(property, {
    seed,
    numRuns: options.runs ?? target.runs,
    ...(options.path ? { path: options.path } : {}),
    // One input, then its shrinking, each under the budget already: no global time limit.
    markInterruptAsFailure: false,
  });
  const ms = performance.now() - started;
  await target.close?.(context);
  const report: TargetReport = { target: target.name, runs: details.numRuns, ms, seed };
  if (details.failed) {
    report.failure = {
      path: details.counterexamplePath ?? '',
      message: describe(details.errorInstance),
      input: preview(details.counterexample),
      stack: details.errorInstance instanceof Error ? (details.errorInstance.stack ?? '') : '',
    };
  }
  return report;
}

/** A short printable form of a failing input (hostile inputs can be megabytes, or cyclic). */
export function preview(value: unknown): string {
  try {
    const text = fc.stringify(value);
    return text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : text;
  } catch (e) {
    return `(unprintable: ${describe(e)})`;
  }
}
