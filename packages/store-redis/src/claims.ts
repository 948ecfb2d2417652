import type { ClaimsDriver, DueWindow } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { CLAIM_DUE, LIST_DUE, RELEASE_DUE } from './due-scripts.js';
import { scoreBound } from './encode.js';
import type { Keys } from './keys.js';
import { runScript } from './scripts.js';

// Ids per release script: a long one blocks the server as long as a scan.
const RELEASE_CHUNK = 500;

/** `due` and the claims of a Redis store: every due read claims, one script each (see due-scripts.ts). */
export function dueDriver(
  client: Redis | Cluster,
  keys: Keys,
  maxSkipped: number,
): { due(w: DueWindow): Promise<string[]>; claims: ClaimsDriver } {
  // The keys: the index read, `due` (the same key when it is the one read; else the other index its
  // claims move), the old-scheme claims. A lane read from `due`, and the sets of the fairness keys,
  // are derived inside the script from the prefix, the lane's workflow and each instance's stored
  // workflow and key: same prefix, same hash tag, same slot.
  const run = (s: typeof LIST_DUE, w: DueWindow, ids: readonly string[] = []) =>
    runScript(
      client,
      s,
      [w.workflow === undefined ? keys.due : keys.dueWorkflow(w.workflow), keys.due, keys.claims],
      [
        scoreBound(w.now),
        w.limit,
        scoreBound(w.until),
        maxSkipped,
        keys.prefix,
        w.token,
        w.workflow ?? '',
        ...ids,
      ],
    ) as Promise<string[]>;
  return {
    // Replies lead with the count of index entries read (for tests), then {id, …} or {id, json, …}.
    due: async (w) => (await run(LIST_DUE, w)).slice(1),
    claims: {
      async claim(w) {
        const reply = await run(CLAIM_DUE, w, w.ids);
        return reply.filter((_, i) => i > 0 && i % 2 === 0);
      },
      async release(ids, token) {
        for (let i = 0; i < ids.length; i += RELEASE_CHUNK) {
          const chunk = ids.slice(i, i + RELEASE_CHUNK);
          await runScript(client, RELEASE_DUE, [keys.due], [keys.prefix, token, ...chunk]);
        }
      },
    },
  };
}
