import {
  createMemoryStore,
  createRunner,
  defineHooks,
  isTerminal,
  type LogEntry,
  type RunnerHooks,
  type Snapshot,
} from '@stepfold/engine';
import type { Command } from 'commander';
import { loadDefinition } from '../definitions.js';
import { runExitCode } from '../exit-codes.js';
import { loadHandlers } from '../handlers.js';
import { CLI_KINDS } from '../kinds.js';
import { type CommonOptions, jsonArgument, jsonOption } from '../options.js';
import { brief, createOutput, type Output } from '../output.js';

interface RunOptions extends CommonOptions {
  handlers: string;
  input?: string | undefined;
  id?: string | undefined;
}

/** One progress event of a run, as `--json` lists them; `t` is simulated ms since the start. */
interface Progress {
  t: number;
  event: string;
  step?: string | undefined;
  attempt?: number | undefined;
  detail?: string | undefined;
}

// A workflow whose timers keep rescheduling (a loop with a sleep) would never end: stop somewhere.
const MAX_CLOCK_JUMPS = 10_000;

/** Simulated time for people: `0s`, `1.5s`, `1h0m3s`. */
function duration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

/** The runner hooks that print one line per step event as the run goes. */
function progressHooks(out: Output, progress: Progress[], elapsed: () => number): RunnerHooks {
  const emit = (p: Omit<Progress, 't'>) => {
    const entry = { t: elapsed(), ...p };
    progress.push(entry);
    const what = `${p.step ?? ''}${p.attempt !== undefined ? ` #${p.attempt}` : ''}`;
    out.line(
      `  +${duration(entry.t).padEnd(9)} ${p.event.padEnd(24)} ${what.padEnd(18)} ${p.detail ?? ''}`.trimEnd(),
    );
  };
  const fromEntry = (e: LogEntry) =>
    emit({
      event: e.type,
      ...(e.step !== undefined ? { step: e.step } : {}),
      ...(e.attempt !== undefined ? { attempt: e.attempt } : {}),
      ...(e.detail !== undefined ? { detail: e.detail } : {}),
    });
  return {
    onStepStarted: (step) => emit({ event: 'step.started', step }),
    onStepCompleted: (step, s) => {
      const output = s.steps[step]?.output;
      emit({ event: 'step.completed', step, ...(output !== undefined ? { detail: brief(output, 60) } : {}) });
    },
    onStepFailed: (step, s) => {
      const error = s.steps[step]?.error;
      const detail = error ? `${error.code ?? 'ERROR'}: ${error.message}` : undefined;
      emit({ event: `step.${s.steps[step]?.status ?? 'failed'}`, step, ...(detail ? { detail } : {}) });
    },
    onCompensation: fromEntry,
    // Attempts that fail and are retried are not step events; show them, and timers and signals.
    onTransition: (e) => {
      if (/^(task\.failed|task\.retry-scheduled|timer\.fired|signal\.|workflow\.)/.test(e.type)) fromEntry(e);
    },
  };
}

async function run(definitionPath: string, options: RunOptions): Promise<number> {
  const out = createOutput(options.json === true);
  const def = await loadDefinition(definitionPath);
  const handlers = await loadHandlers(options.handlers);
  const input = options.input === undefined ? undefined : jsonArgument(options.input, '--input');
  const id = options.id ?? `${def.name}-1`;

  // Simulated time: the clock stands still while handlers run and jumps to each wake-up.
  const startedAt = Date.now();
  let now = startedAt;
  const progress: Progress[] = [];
  const clockJumps: { from: number; to: number }[] = [];
  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [def],
    handlers,
    kinds: CLI_KINDS,
    clock: () => now,
    hooks: defineHooks(progressHooks(out, progress, () => now - startedAt)),
  });

  out.line(`run ${def.name} v${def.version} as ${id} on the in-memory store (simulated clock)`);
  let s: Snapshot = await runner.start(def.name, id, input);
  while (!isTerminal(s.status) && s.status !== 'dlq' && s.wakeAt !== null) {
    if (clockJumps.length >= MAX_CLOCK_JUMPS) {
      out.line(`stopping after ${MAX_CLOCK_JUMPS} clock jumps: the workflow keeps scheduling timers`);
      break;
    }
    const to = Math.max(now, s.wakeAt);
    out.line(
      `clock: nothing to do until the next wake-up; simulated clock jumps +${duration(to - now)} (no real wait), then processDue`,
    );
    clockJumps.push({ from: now - startedAt, to: to - startedAt });
    now = to;
    await runner.processDue(now);
    s = (await runner.get(id)) ?? s;
  }
  await runner.idle();

  const code = runExitCode(s.status);
  const data = {
    id,
    workflow: s.workflow,
    status: s.status,
    exitCode: code,
    ...(s.output !== undefined ? { output: s.output } : {}),
    ...(s.error ? { error: s.error } : {}),
    simulatedMs: now - startedAt,
    clockJumps,
    progress,
    snapshot: s,
  };
  out.result(data, () => {
    const lines = [
      '',
      `status: ${s.status} (v${s.version}; ${clockJumps.length} clock jumps, ${duration(now - startedAt)} simulated)`,
    ];
    if (s.output !== undefined) lines.push(`output: ${JSON.stringify(s.output)}`);
    if (s.error)
      lines.push(`error: ${s.error.code ?? 'ERROR'} at ${s.error.step ?? '-'}: ${s.error.message}`);
    if (s.status === 'waiting') {
      lines.push(
        `waiting for ${s.active.join(', ')} with nothing scheduled: run sends no signals; start it on a store and use \`stepfold signal\` / \`approve\``,
      );
    }
    if (s.status === 'dlq') lines.push('parked in dlq: on a store, `stepfold requeue` retries it');
    return lines;
  });
  return code;
}

/** `stepfold run <definition> --handlers <module>`: runs a workflow to its end on the in-memory store. */
export function register(program: Command): void {
  jsonOption(
    program
      .command('run')
      .description(
        'run a definition with a handlers module on the in-memory store, jumping a simulated clock to each timer',
      )
      .argument(
        '<definition>',
        'workflow definition: .json, .yaml, .yml, or an ESM module (.js, .mjs) exporting one built workflow (file.js#name picks the export name)',
      )
      .requiredOption(
        '--handlers <module>',
        'ESM module (.js, .mjs) exporting the handlers (default object or named)',
      )
      .option('--input <json>', 'workflow input: JSON, or @file')
      .option('--id <id>', 'instance id (default: <workflow>-1)'),
  ).action(async (definition: string, options: RunOptions) => {
    // Not an error: the run worked and reports how the workflow ended (10 and up).
    process.exitCode = await run(definition, options);
  });
}
