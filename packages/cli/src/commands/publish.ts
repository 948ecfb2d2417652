import { createRunner, eventTriggers } from '@stepfold/engine';
import type { Command } from 'commander';
import { loadDefinitions } from '../definitions.js';
import { changeExitCode, EXIT } from '../exit-codes.js';
import { CLI_KINDS } from '../kinds.js';
import {
  type ActingOptions,
  definitionsOption,
  jsonArgument,
  jsonOption,
  requireDefinitions,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';
import { storeUrlOf, withStore } from '../store-url.js';

interface PublishOptions extends ActingOptions {
  id: string;
  data?: string | undefined;
}

/**
 * `stepfold publish <event> --id <id> --data <json>`: starts a run of each workflow of
 * `--definitions` whose `on` names the event and whose filter its data passes, once per event id
 * (`runner.publish`), its first tasks queued for workers. Exits 0 when it started a run, 8 when it
 * started nothing (none matched, or all had started before), 5 when every match refused the data.
 */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('publish')
          .description(
            "publish an event: starts each matching workflow's run once per event id, for your workers",
          )
          .argument('<event>', "event name (matched against the workflows' `on`)")
          .requiredOption('--id <id>', 'event id: a run per workflow and id, however often it is published')
          .option('--data <json>', "event data, the runs' input: JSON, or @file"),
      ),
    ),
  ).action(async (name: string, options: PublishOptions) => {
    const out = createOutput(options.json === true);
    const data = options.data === undefined ? undefined : jsonArgument(options.data, '--data');
    const defs = await loadDefinitions(requireDefinitions(options, 'publish'));
    await withStore(storeUrlOf(options.store), async (opened) => {
      const runner = createRunner({
        store: opened.store,
        workflows: defs,
        execute: false,
        kinds: [...CLI_KINDS, eventTriggers],
      });
      const r = await runner.publish({ name, id: options.id, data });
      const refused = r.refused.map(({ error, ...run }) => ({
        ...run,
        error: { code: (error as { code?: string }).code ?? 'ERROR', message: error.message },
      }));
      const onlyRefused = r.started.length === 0 && r.existed.length === 0 && refused.length > 0;
      process.exitCode = onlyRefused ? EXIT.invalid : changeExitCode(r.started.length > 0);
      out.result({ event: name, id: options.id, started: r.started, existed: r.existed, refused }, () => {
        const line = (what: string, runs: ReadonlyArray<{ workflow: string; version: number; id: string }>) =>
          runs.map((x) => `  ${what} ${x.id} (${x.workflow} v${x.version})`);
        const lines = [
          ...line('started', r.started),
          ...line('existed', r.existed),
          ...refused.map((x) => `  refused ${x.workflow}: ${x.error.code} ${x.error.message}`),
        ];
        return lines.length
          ? [`publish ${name} ${options.id}:`, ...lines].join('\n')
          : `publish ${name} ${options.id}: no workflow starts on it`;
      });
    });
  });
}
