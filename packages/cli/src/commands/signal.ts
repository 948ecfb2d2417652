import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { type ActingOptions, definitionsOption, jsonArgument, jsonOption, storeOption } from '../options.js';
import { createOutput } from '../output.js';

interface SignalOptions extends ActingOptions {
  payload?: string | undefined;
  signalId?: string | undefined;
}

/** `stepfold signal <id> <name>`: delivers a signal (or buffers it in the inbox). */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('signal')
          .description('send a signal to an instance; tasks it dispatches are queued for your workers')
          .argument('<id>', 'instance id')
          .argument('<name>', 'signal name')
          .option('--payload <json>', 'signal payload: JSON, or @file')
          .option('--signal-id <id>', 'deduplication id: the same id again is ignored'),
      ),
    ),
  ).action(async (id: string, name: string, options: SignalOptions) => {
    const out = createOutput(options.json === true);
    const payload = options.payload === undefined ? undefined : jsonArgument(options.payload, '--payload');
    await withHandOffRunner(options, 'signal', id, async ({ runner, before }) => {
      const after = await runner.signal(id, name, payload, {
        ...(options.signalId ? { signalId: options.signalId } : {}),
      });
      reportChange(out, `signal ${name}`, before, after);
    });
  });
}
