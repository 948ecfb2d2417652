import { composition, createHarness } from '@stepfold/engine';
import { aslHandlers, fromAsl } from '../src/index.js';

/** The ARN prefix of the test machines' Lambda tasks: `${FN}check` is served by `resources.check`. */
export const FN = 'arn:aws:lambda:eu-west-1:111111111111:function:';

/** Task resources for {@link runMachine}, by function name. */
export type Resources = Parameters<typeof aslHandlers>[1]['resources'];

/**
 * Imports `machine`, starts it with `input` in the harness and runs it to its end (timers
 * advanced), its Lambda tasks served by `resources`; `random` replaces aslHandlers' own.
 */
export async function runMachine(
  machine: unknown,
  input: unknown,
  resources: Resources = {},
  random?: () => number,
) {
  const imported = fromAsl(machine);
  const h = createHarness(imported.definition, { workflows: imported.workflows, kinds: [composition] });
  h.start(input as never);
  const handlers = aslHandlers(imported, { resources, now: () => h.now, ...(random ? { random } : {}) });
  await h.run(handlers as never, { timers: 'advance' });
  return { h, imported };
}
