import { ValidationError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { ClaimQuery, DueClaims } from './store.js';
import type { ClaimsDriver } from './store-driver.js';
import { decodeEach, dueWindow, type StoreParts } from './store-parts.js';

// The `claims` capability of a store made by `defineStore`, over the driver's claim calls.

/** The {@link DueClaims} of a defined store whose driver has claim calls. */
export function definedClaims(parts: StoreParts, calls: ClaimsDriver): DueClaims {
  return {
    claimDue: (now, limit, query) => claimDue(parts, calls, now, limit, query),
    release: (ids, token = parts.ownToken) => release(parts, calls, ids, token),
  };
}

async function claimDue(
  parts: StoreParts,
  calls: ClaimsDriver,
  now: number,
  limit: number,
  query: ClaimQuery | undefined,
): Promise<Snapshot[]> {
  const { kit } = parts;
  const window = dueWindow(parts, now, limit, query);
  const ids = query?.ids === undefined ? undefined : Array.from(query.ids, (id) => kit.id(id));
  if (window === null || ids?.length === 0) return [];
  const rows = await kit.guard('claimDue', () =>
    calls.claim(ids === undefined ? window : { ...window, ids }),
  );
  // Claimed by id, a row must be one of those asked for, as `load` checks (a misplaced or
  // hand-edited row names another instance); a lane's rows come back without their ids.
  const asked = ids === undefined ? null : new Set(ids);
  const read = (json: string) => {
    const s = kit.decode(json);
    if (asked && !asked.has(s.id))
      throw new ValidationError(
        'INVALID_SNAPSHOT',
        `a row claimed by id names instance ${JSON.stringify(s.id)}`,
        [{ path: 'id', message: 'must be one of the ids claimed' }],
      );
    return s;
  };
  return decodeEach(rows, read, query?.onUnreadable);
}

async function release(
  parts: StoreParts,
  calls: ClaimsDriver,
  ids: readonly string[],
  token: string,
): Promise<void> {
  const list = Array.from(ids, (id) => parts.kit.id(id));
  if (list.length) await parts.kit.guard('release', () => calls.release(list, token));
}
