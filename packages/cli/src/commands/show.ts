import { maskEncoded, NotFoundError, toMermaid } from '@stepfold/engine';
import type { Command } from 'commander';
import { type InstanceActions, instanceActions, renderActions } from '../actions-view.js';
import { definitionFor, loadDefinitions } from '../definitions.js';
import { UsageError } from '../exit-codes.js';
import { loadFamily, renderFamily } from '../family.js';
import {
  definitionPaths,
  definitionsOption,
  jsonOption,
  type StoreOptions,
  storeOption,
} from '../options.js';
import { createOutput } from '../output.js';
import { refsWithPaths, renderRefs, resolveAll } from '../payload-view.js';
import { renderSnapshot, summarize } from '../snapshot-view.js';
import { storeUrlOf, withStore } from '../store-url.js';

interface ShowOptions extends StoreOptions {
  diagram?: boolean | undefined;
  resolve?: boolean | undefined;
  definitions?: string[] | undefined;
}

/**
 * `stepfold show <id>`: one instance's state, its parent and children (with their statuses), what
 * it can take now, its log, optionally a diagram; offloaded values as references, or with
 * `--resolve` fetched from the payload store.
 */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('show')
          .description(
            'show an instance: status, parent and children, steps, in-flight tasks, timers, inbox, error and log; with --definitions, whether cancel is possible and the signals it takes now',
          )
          .argument('<id>', 'instance id')
          .option('--diagram', 'also print its Mermaid diagram, coloured by its state (needs --definitions)')
          .option(
            '--resolve',
            'fetch offloaded values from the payload store and print them in place of their references',
          ),
      ),
      false,
    ),
  ).action(async (id: string, options: ShowOptions) => {
    const out = createOutput(options.json === true);
    const paths = definitionPaths(options);
    if (options.diagram && !paths.length) throw new UsageError('show --diagram needs --definitions');
    const defs = paths.length ? await loadDefinitions(paths) : [];
    await withStore(storeUrlOf(options.store), async ({ store, payloads, codec }) => {
      const s = await store.load(id);
      if (!s) throw new NotFoundError(id);
      // What is printed; the rest (actions, family, diagram) reads the stored snapshot, references
      // and all, as the reducer does.
      const refs = refsWithPaths(s);
      // Without --key-file, encrypted values print as their markers (`[encrypted k2]`).
      const shown = maskEncoded(
        options.resolve && refs.length ? await resolveAll(s, await payloads(), id, codec) : s,
      );
      const def = definitionFor(defs, s.workflow);
      const missing = `no definition of ${s.workflow.name} v${s.workflow.version} among --definitions`;
      if (options.diagram && !def) throw new UsageError(missing);
      const family = await loadFamily(store, s, def);
      // The diagram colours a child step by its child's own status, which the family loaded.
      const children = Object.fromEntries(
        family.children.flatMap((c) =>
          c.kind === 'child' && c.childStatus !== 'missing' ? [[c.id, c.childStatus]] : [],
        ),
      );
      const diagram = options.diagram && def ? toMermaid(def, s, { children }) : undefined;
      const actions: InstanceActions | undefined = def ? instanceActions(def, s) : undefined;
      const note = paths.length
        ? `actions: ${missing}`
        : 'actions: pass --definitions to see whether cancel is possible and the signals it takes now';
      const related = renderFamily(s, family);
      const now = Date.now();
      out.result(
        {
          ...summarize(shown, now),
          ...(family.parent ? { parent: family.parent } : {}),
          children: family.children,
          ...(actions ? { actions } : {}),
          ...(diagram ? { diagram } : {}),
        },
        () => [
          ...renderSnapshot(
            shown,
            [
              ...(actions ? renderActions(actions) : [note]),
              ...(refs.length ? ['', ...renderRefs(refs, options.resolve === true)] : []),
              ...(related.length ? ['', ...related] : []),
            ],
            now,
          ),
          ...(diagram ? ['', diagram] : []),
        ],
      );
    });
  });
}
