import { NotFoundError } from '@stepfold/engine';
import { toMermaid } from '@stepfold/engine/diagram';
import type { Command } from 'commander';
import { definitionFor, loadDefinitions } from '../definitions.js';
import { UsageError } from '../exit-codes.js';
import {
  definitionPaths,
  definitionsOption,
  jsonOption,
  type StoreOptions,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';
import { renderSnapshot, summarize } from '../snapshot-view.js';
import { storeUrlOf, withStore } from '../store-url.js';

interface ShowOptions extends StoreOptions {
  diagram?: boolean | undefined;
  definitions?: string[] | undefined;
}

/** `stepfold show <id>`: one instance's state and transition log, optionally as a diagram. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('show')
          .description('show an instance: status, steps, in-flight tasks, timers, inbox, error and log')
          .argument('<id>', 'instance id')
          .option('--diagram', 'also print its Mermaid diagram, coloured by its state (needs --definitions)'),
      ),
      false,
    ),
  ).action(async (id: string, options: ShowOptions) => {
    const out = createOutput(options.json === true);
    const paths = options.diagram ? definitionPaths(options) : [];
    if (options.diagram && !paths.length) throw new UsageError('show --diagram needs --definitions');
    const defs = paths.length ? loadDefinitions(paths) : [];
    await withStore(storeUrlOf(options.store), async ({ store }) => {
      const s = await store.load(id);
      if (!s) throw new NotFoundError(id);
      let diagram: string | undefined;
      if (options.diagram) {
        const def = definitionFor(defs, s.workflow);
        if (!def) {
          throw new UsageError(
            `no definition of ${s.workflow.name} v${s.workflow.version} among --definitions`,
          );
        }
        diagram = toMermaid(def, s);
      }
      out.result({ ...summarize(s), ...(diagram ? { diagram } : {}) }, () => [
        ...renderSnapshot(s),
        ...(diagram ? ['', diagram] : []),
      ]);
    });
  });
}
