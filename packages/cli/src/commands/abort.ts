import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { type ActingOptions, definitionsOption, jsonOption, storeOption } from '../options.js';
import { createOutput } from '../output.js';

interface AbortOptions extends ActingOptions {
  reason?: string | undefined;
}

/** `stepfold abort <id>`: ends the instance `aborted` at once, without compensating. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('abort')
          .description('abort an instance: it ends aborted at once, nothing is compensated')
          .argument('<id>', 'instance id')
          .option('--reason <text>', 'why, kept in the snapshot'),
      ),
    ),
  ).action(async (id: string, options: AbortOptions) => {
    const out = createOutput(options.json === true);
    await withHandOffRunner(options, 'abort', id, async ({ runner, before }) => {
      reportChange(out, 'abort', before, await runner.abort(id, options.reason));
    });
  });
}
