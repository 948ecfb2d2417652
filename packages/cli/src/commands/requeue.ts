import { isTerminal } from '@stepfold/engine';
import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import {
  type ActingOptions,
  definitionsOption,
  jsonObjectArgument,
  jsonOption,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';

interface RequeueOptions extends ActingOptions {
  step?: string | undefined;
  patch?: string | undefined;
}

/** `stepfold requeue <id>`: retries what is parked in dlq, optionally patching the workflow input. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('requeue')
          .description('retry what an instance parked in dlq; the retried task is queued for your workers')
          .argument('<id>', 'instance id')
          .option('--step <step>', 'only this parked step')
          .option('--patch <json>', 'merge into the workflow input first: a JSON object, or @file'),
      ),
    ),
  ).action(async (id: string, options: RequeueOptions) => {
    const out = createOutput(options.json === true);
    const inputPatch = options.patch === undefined ? undefined : jsonObjectArgument(options.patch, '--patch');
    await withHandOffRunner(options, 'requeue', id, async ({ runner, before }) => {
      const after = await runner.requeue(id, {
        ...(options.step ? { step: options.step } : {}),
        ...(inputPatch ? { inputPatch } : {}),
      });
      const parked = Object.entries(before.steps)
        .filter(([, st]) => st.status === 'dlq' || st.status === 'compensation-dlq')
        .map(([step]) => step);
      // A finished instance takes the generic answer; else say what is (not) parked.
      const why = isTerminal(before.status)
        ? undefined
        : parked.length
          ? `${options.step} is not parked (parked: ${parked.join(', ')})`
          : `nothing is parked in dlq, it is ${before.status}`;
      reportChange(out, 'requeue', before, after, why);
    });
  });
}
