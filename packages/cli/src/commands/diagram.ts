import { NotFoundError, type Snapshot, toMermaid } from '@stepfold/engine';
import type { Command } from 'commander';
import { loadDefinition } from '../definitions.js';
import { UsageError } from '../exit-codes.js';
import { jsonOption, type StoreOptions, storeOption } from '../options.js';
import { createOutput } from '../output.js';
import { storeUrlOf, withStore } from '../store-url.js';

interface DiagramOptions extends StoreOptions {
  id?: string | undefined;
}

/** `stepfold diagram <definition>`: the Mermaid flowchart, coloured by a stored instance with `--id`. */
export function register(program: Command): void {
  jsonOption(
    storeOption(
      program
        .command('diagram')
        .description('print a definition as a Mermaid flowchart; with --id, coloured by that stored instance')
        .argument(
          '<definition>',
          'workflow definition: .json, .yaml, .yml, or an ESM module (.js, .mjs) exporting one built workflow (file.js#name picks the export name)',
        )
        .option('--id <id>', 'colour the steps by this instance (needs --store)'),
    ),
  ).action(async (definitionPath: string, options: DiagramOptions) => {
    const out = createOutput(options.json === true);
    const def = await loadDefinition(definitionPath);
    let snapshot: Snapshot | undefined;
    const id = options.id;
    if (id !== undefined) {
      snapshot = await withStore(storeUrlOf(options.store), async ({ store }) => {
        const s = await store.load(id);
        if (!s) throw new NotFoundError(id);
        return s;
      });
      if (snapshot.workflow.name !== def.name) {
        throw new UsageError(`${id} is an instance of ${snapshot.workflow.name}, not of ${def.name}`);
      }
    } else if (options.store !== undefined) {
      throw new UsageError('--store is only used with --id');
    }
    const diagram = toMermaid(def, snapshot);
    out.result({ diagram, ...(id !== undefined ? { id } : {}) }, () => diagram.trimEnd());
  });
}
