import { isTerminal, type Snapshot } from '@stepfold/engine';
import type { Command } from 'commander';
import { reportChange, withHandOffRunner } from '../hand-off.js';
import { type ActingOptions, definitionsOption, jsonArgument, jsonOption, storeOption } from '../options.js';
import { createOutput } from '../output.js';

/** Options of `signal` and `send`. */
export interface SignalOptions extends ActingOptions {
  payload?: string | undefined;
  signalId?: string | undefined;
}

/** Declares `<id> <name> --payload --signal-id` and the store options, shared by `signal` and `send`. */
export function signalCommand(program: Command, name: string, description: string): Command {
  return jsonOption(
    definitionsOption(
      storeOption(
        program
          .command(name)
          .description(description)
          .argument('<id>', 'instance id')
          .argument('<name>', 'signal name')
          .option('--payload <json>', 'signal payload: JSON, or @file (checked against a declared schema)')
          .option('--signal-id <id>', 'deduplication id: the same id again is ignored'),
      ),
    ),
  );
}

/** The `--payload` and `--signal-id` of a signal command, as the runner takes them. */
export function signalArguments(options: SignalOptions): {
  payload: unknown;
  call: { signalId?: string };
} {
  return {
    payload: options.payload === undefined ? undefined : jsonArgument(options.payload, '--payload'),
    call: options.signalId ? { signalId: options.signalId } : {},
  };
}

/** Why a signal would leave the instance as it is: finished, or its signal id seen already; else undefined. */
export function signalIgnored(before: Snapshot, signalId: string | undefined): string | undefined {
  if (isTerminal(before.status)) return `${before.id} has finished (${before.status}) and ignores signals`;
  if (signalId !== undefined && before.seenSignals.includes(signalId))
    return `signal id ${JSON.stringify(signalId)} was applied before; a duplicate changes nothing`;
  return undefined;
}

/** `stepfold signal <id> <name>`: applies a signal now (or buffers it in the instance's inbox). */
export function register(program: Command): void {
  signalCommand(
    program,
    'signal',
    'apply a signal to an instance now and print its new state; tasks it dispatches are queued for your workers',
  ).action(async (id: string, name: string, options: SignalOptions) => {
    const out = createOutput(options.json === true);
    const { payload, call } = signalArguments(options);
    await withHandOffRunner(options, 'signal', id, async ({ runner, before }) => {
      const after = await runner.signal(id, name, payload, call);
      reportChange(out, `signal ${name}`, before, after, signalIgnored(before, call.signalId));
    });
  });
}
