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
    await withHandOffRunner(options, 'cancel', id, async ({ runner, before }) => {
      reportChange(out, 'cancel', before, await runner.cancel(id, options.reason));
    });
  });
}
