import { cancelRefusal, isStepfoldError } from '@stepfold/engine';
import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { type ActingOptions, definitionsOption, jsonOption, storeOption } from '../options.js';
import { createOutput } from '../output.js';

interface CancelOptions extends ActingOptions {
  reason?: string | undefined;
}

/** `stepfold cancel <id>`: rolls the instance back (compensations queued for workers), ends `cancelled`. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('cancel')
          .description(
            'cancel an instance: its compensations are queued for your workers, then it ends cancelled',
          )
          .argument('<id>', 'instance id')
          .option('--reason <text>', 'why, kept in the snapshot'),
      ),
    ),
  ).action(async (id: string, options: CancelOptions) => {
    const out = createOutput(options.json === true);
    await withHandOffRunner(options, 'cancel', id, async ({ runner, before, definition }) => {
      let after: Awaited<ReturnType<typeof runner.cancel>>;
      try {
        after = await runner.cancel(id, options.reason);
      } catch (e) {
        // Refused, nothing written (exit 4): say what still stops the instance.
        if (isStepfoldError(e, 'PAST_PIVOT')) {
          e.message = `${e.message}. abort still works: \`stepfold abort ${id}\` ends it aborted at once, without compensation`;
        }
        throw e;
      }
      // Finished or already cancelling: the engine's own account of why nothing changed.
      const refusal = definition ? cancelRefusal(definition, before) : undefined;
      reportChange(out, 'cancel', before, after, refusal?.message);
    });
  });
}
