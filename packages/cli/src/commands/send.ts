import type { Command } from 'commander';
import { changeExitCode } from '../exit-codes.js';
import { withHandOffRunner } from '../hand-off.js';
import { createOutput } from '../output.js';
import { headline } from '../snapshot-view.js';
import { type SignalOptions, signalArguments, signalCommand, signalIgnored } from './signal.js';

/**
 * `stepfold send <id> <name>`: writes a signal for a worker to apply (`runner.send`) and returns.
 * On a store with an inbox (PostgreSQL, Redis) that is one write and the instance is not changed
 * yet; elsewhere the runner applies it at once, as `signal` does.
 */
export function register(program: Command): void {
  signalCommand(
    program,
    'send',
    "send a signal for your workers to apply: written to the store's inbox, applied by a worker",
  ).action(async (id: string, name: string, options: SignalOptions) => {
    const out = createOutput(options.json === true);
    const { payload, call } = signalArguments(options);
    await withHandOffRunner(options, 'send', id, async ({ runner, before, opened }) => {
      // Name and payload are checked (UNKNOWN_SIGNAL, INVALID_INPUT) before anything is written.
      await runner.send(id, name, payload, call);
      const after = (await opened.store.load(id)) ?? before;
      const inbox = opened.store.inbox !== undefined;
      const ignored = signalIgnored(before, call.signalId);
      const delivered = ignored
        ? 'unchanged'
        : after.version !== before.version
          ? 'applied'
          : inbox
            ? 'inbox'
            : 'unchanged';
      const changed = delivered !== 'unchanged';
      process.exitCode = changeExitCode(changed);
      const data = {
        action: `send ${name}`,
        id,
        delivered,
        changed,
        ...(changed ? {} : { unchanged: ignored ?? 'the signal did not apply' }),
        previousVersion: before.version,
        version: after.version,
        status: after.status,
      };
      out.result(data, () => {
        if (delivered === 'inbox') {
          return `send ${name}: written to the inbox; a worker applies it (${headline(after)})`;
        }
        if (delivered === 'applied') {
          return `send ${name}: applied, v${before.version} -> v${after.version}; ${headline(after)}`;
        }
        return `send ${name}: nothing changed (${data.unchanged}); ${headline(after)}`;
      });
    });
  });
}
