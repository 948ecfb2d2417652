import type { EmitEvent } from '../../src/worker/types.js';

/** An event emitter for a worker part under test, and what it emitted: `[name, ...args]`. */
export function recorder(): { emit: EmitEvent; events: unknown[][]; names: () => string[] } {
  const events: unknown[][] = [];
  const emit = ((k: string, ...args: unknown[]) => {
    events.push([k, ...args]);
  }) as EmitEvent;
  return { emit, events, names: () => events.map((e) => e[0] as string) };
}
