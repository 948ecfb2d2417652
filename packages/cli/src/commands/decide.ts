import { isTerminal } from '@stepfold/engine';
import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { decisionFor } from '../human-step.js';
import {
  type ActingOptions,
  definitionsOption,
  jsonObjectArgument,
  jsonOption,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';

interface DecisionOptions extends ActingOptions {
  step?: string | undefined;
  by?: string | undefined;
  reason?: string | undefined;
  payload?: string | undefined;
}

const DESCRIPTIONS = {
  approve: "approve a human step: sends its signal with { decision: 'approve' }",
  reject: "reject a human step: sends its signal with { decision: 'reject' }; the step fails REJECTED",
} as const;

/**
 * Registers `stepfold approve <id>` or `stepfold reject <id>`: sends `{ decision }` (with `--by`,
 * `--reason` and `--payload` fields) to the human step the instance waits at.
 */
export function registerDecision(program: Command, decision: 'approve' | 'reject'): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command(decision)
          .description(DESCRIPTIONS[decision])
          .argument('<id>', 'instance id')
          .option('--step <step>', 'the human step (default: the one the instance waits at)')
          .option('--reason <text>', 'why, kept in the decision payload')
          .option('--by <who>', 'who decided, kept in the decision payload')
          .option('--payload <json>', 'more fields for the decision payload: a JSON object, or @file'),
      ),
    ),
  ).action(async (id: string, options: DecisionOptions) => {
    const out = createOutput(options.json === true);
    const extra = options.payload === undefined ? {} : jsonObjectArgument(options.payload, '--payload');
    await withHandOffRunner(options, decision, id, async ({ runner, before, definition }) => {
      // A finished instance has no decision left to make: nothing to do (exit 8), not a mistake.
      if (isTerminal(before.status)) {
        reportChange(
          out,
          decision,
          before,
          before,
          `${id} has finished (${before.status}); no decision is pending`,
        );
        return;
      }
      const { step, signal } = decisionFor(definition, before, options.step);
      const payload = {
        ...extra,
        ...(options.by ? { by: options.by } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
        decision,
      };
      reportChange(out, `${decision} ${step}`, before, await runner.signal(id, signal, payload));
    });
  });
}
