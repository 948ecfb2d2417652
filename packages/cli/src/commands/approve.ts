import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { decisionSignal } from '../human-step.js';
import {
  type ActingOptions,
  definitionsOption,
  jsonObjectArgument,
  jsonOption,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';

interface ApproveOptions extends ActingOptions {
  step?: string;
  by?: string;
  payload?: string;
}

/** `stepfold approve <id>`: sends `{ decision: 'approve' }` to the instance's waiting human step. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('approve')
          .description("approve a human step: sends its signal with { decision: 'approve' }")
          .argument('<id>', 'instance id')
          .option('--step <step>', 'the human step (default: the one the instance waits at)')
          .option('--by <who>', 'who decided, kept in the step output')
          .option('--payload <json>', 'more fields for the decision payload: a JSON object, or @file'),
      ),
    ),
  ).action(async (id: string, options: ApproveOptions) => {
    const out = createOutput(options.json === true);
    const extra = options.payload === undefined ? {} : jsonObjectArgument(options.payload, '--payload');
    await withHandOffRunner(options, 'approve', id, async ({ runner, before, definition }) => {
      const { step, signal } = decisionSignal(definition, before, options.step);
      const payload = { ...extra, ...(options.by ? { by: options.by } : {}), decision: 'approve' };
      reportChange(out, `approve ${step}`, before, await runner.signal(id, signal, payload));
    });
  });
}
