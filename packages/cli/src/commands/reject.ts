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

interface RejectOptions extends ActingOptions {
  step?: string;
  by?: string;
  reason?: string;
  payload?: string;
}

/** `stepfold reject <id>`: sends `{ decision: 'reject' }`; the step fails with `REJECTED`. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('reject')
          .description(
            "reject a human step: sends its signal with { decision: 'reject' }; the step fails REJECTED",
          )
          .argument('<id>', 'instance id')
          .option('--step <step>', 'the human step (default: the one the instance waits at)')
          .option('--reason <text>', 'why, kept in the decision payload')
          .option('--by <who>', 'who decided')
          .option('--payload <json>', 'more fields for the decision payload: a JSON object, or @file'),
      ),
    ),
  ).action(async (id: string, options: RejectOptions) => {
    const out = createOutput(options.json === true);
    const extra = options.payload === undefined ? {} : jsonObjectArgument(options.payload, '--payload');
    await withHandOffRunner(options, 'reject', id, async ({ runner, before, definition }) => {
      const { step, signal } = decisionSignal(definition, before, options.step);
      const payload = {
        ...extra,
        ...(options.by ? { by: options.by } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
        decision: 'reject',
      };
      reportChange(out, `reject ${step}`, before, await runner.signal(id, signal, payload));
    });
  });
}
