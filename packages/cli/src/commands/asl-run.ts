import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  type AslImport,
  aslChildren,
  aslHandlers,
  aslProblems,
  fromAsl,
  type LambdaFunction,
  toAslHistory,
} from '@stepfold/asl';
import { createMemoryStore, createRunner, isTerminal, type Snapshot } from '@stepfold/engine';
import { readUserFile } from '../definitions.js';
import { EXIT, runExitCode, UsageError } from '../exit-codes.js';
import { loadHandlers } from '../handlers.js';
import { CLI_KINDS } from '../kinds.js';
import { jsonArgument } from '../options.js';
import { createOutput } from '../output.js';

// `stepfold asl import` and `stepfold asl run`: a state machine file through `@stepfold/asl`, to
// look at what it becomes, or to run it on the in-memory store with a simulated clock.

// A state machine whose timers keep rescheduling would never end: stop somewhere.
const MAX_CLOCK_JUMPS = 10_000;

function readMachine(file: string): unknown {
  const text = readUserFile(file, 'state machine');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file} is not JSON: ${(e as Error).message}`);
  }
}

/** The workflow name from the file name: `orders.asl.json` gives `orders`. */
function nameOf(file: string): string {
  return basename(file).replace(/(\.asl)?\.json$/i, '') || 'asl-machine';
}

/** `stepfold asl import <file>`: the definitions, or every part refused (exit 5). */
export function importAsl(file: string, options: { json?: boolean; name?: string; out?: string }): number {
  const out = createOutput(options.json === true);
  const machine = readMachine(file);
  const problems = aslProblems(machine).map((p) => ({
    state: p.state,
    field: p.field,
    reason: p.reason,
    message: p.issues[0]?.message ?? p.message,
  }));
  if (problems.length) {
    out.result({ unsupported: problems, exitCode: EXIT.invalid }, () => [
      `${file} cannot be imported: ${problems.length} part(s) refused`,
      ...problems.map((p) => `  ${p.state || '(machine)'} ${p.field} (${p.reason}): ${p.message}`),
    ]);
    return EXIT.invalid;
  }
  const imported = fromAsl(machine, { name: options.name ?? nameOf(file) });
  const result = { definition: imported.definition, workflows: imported.workflows };
  if (options.out) writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
  out.result({ ...result, unsupported: [], ...(options.out ? { written: options.out } : {}) }, () =>
    options.out
      ? [
          `wrote ${options.out}: workflow ${imported.definition.name} (${Object.keys(imported.definition.steps).length} steps)` +
            (imported.workflows.length ? ` and ${imported.workflows.length} Map iteration workflow(s)` : ''),
          'nothing unsupported',
        ]
      : [JSON.stringify(result, null, 2)],
  );
  return EXIT.ok;
}

/** `stepfold asl run <file>`: runs it to its end with a simulated clock and prints the output. */
export async function runAsl(
  file: string,
  options: { json?: boolean; name?: string; handlers: string; input?: string; history?: boolean },
): Promise<number> {
  const out = createOutput(options.json === true);
  const imported: AslImport = fromAsl(readMachine(file), { name: options.name ?? nameOf(file) });
  const functions = (await loadHandlers(options.handlers)) as unknown as Record<string, LambdaFunction>;
  const input = options.input === undefined ? {} : jsonArgument(options.input, '--input');
  const name = imported.definition.name;
  const id = `${name}-1`;
  let now = Date.now();
  const startedAt = now;
  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [imported.definition, ...imported.workflows],
    handlers: aslHandlers(imported, { resources: functions, now: () => now }),
    kinds: CLI_KINDS,
    clock: () => now,
  });
  out.line(`run ${name} as ${id} on the in-memory store (simulated clock)`);
  let s: Snapshot = await runner.start(name, id, input);
  // The next wake-up of the execution or of a Map iteration it waits for (a retry inside one).
  const nextWake = async (): Promise<number | null> => {
    let next: number | null = null;
    for (const x of [s, ...(await aslChildren(s, (c) => runner.get(c)))])
      if (!isTerminal(x.status) && x.wakeAt !== null)
        next = next === null ? x.wakeAt : Math.min(next, x.wakeAt);
    return next;
  };
  let jumps = 0;
  for (let wake = await nextWake(); !isTerminal(s.status) && s.status !== 'dlq' && wake !== null; ) {
    if (++jumps > MAX_CLOCK_JUMPS) break;
    now = Math.max(now, wake);
    await runner.processDue(now);
    s = (await runner.get(id)) ?? s;
    wake = await nextWake();
  }
  await runner.idle();
  s = (await runner.get(id)) ?? s;
  const children = options.history ? await aslChildren(s, (c) => runner.get(c)) : [];
  const history = options.history ? toAslHistory(s, imported, { children }) : undefined;
  const code = runExitCode(s.status);
  const data = {
    id,
    status: s.status,
    exitCode: code,
    ...(s.output !== undefined ? { output: s.output } : {}),
    ...(s.error ? { error: { error: s.error.code ?? null, cause: s.error.message } } : {}),
    simulatedMs: now - startedAt,
    ...(history ? { history } : {}),
  };
  out.result(data, () => {
    const lines: string[] = [];
    if (history)
      for (const e of history) {
        const d = Object.entries(e).find(([k]) => k.endsWith('EventDetails'))?.[1] as
          | Record<string, unknown>
          | undefined;
        const what = d?.['name'] ?? d?.['error'] ?? '';
        lines.push(`  ${String(e.id).padStart(3)} ${e.type.padEnd(28)} ${String(what)}`.trimEnd());
      }
    lines.push('', `status: ${s.status} (${jumps} clock jumps)`);
    if (s.output !== undefined) lines.push(`output: ${JSON.stringify(s.output)}`);
    if (s.error) lines.push(`error: ${s.error.code ?? 'null'}: ${s.error.message}`);
    return lines;
  });
  return code;
}
