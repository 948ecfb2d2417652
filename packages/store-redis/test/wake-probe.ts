import type { Snapshot, Store, WakeNotice, WakeSubscription } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';

/** A snapshot whose wake time is a retry timer: a write of it sends a wake hint. */
export function timerSnapshot(id: string, at: number, patch: Partial<Snapshot> = {}): Snapshot {
  return makeTestSnapshot(id, {
    workflow: { name: 'waker', version: 1, hash: 'h' },
    timers: [{ kind: 'retry', step: 'a', at }],
    wakeAt: at,
    ...patch,
  });
}

/** Polls `cond` every 50 ms until it holds, failing with `what` after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A subscription that records what its listener is told, in order. */
export interface Probe {
  sub: WakeSubscription;
  hints: WakeNotice[];
  /** 'wake', 'lost' and 'restored', in the order they came. */
  events: string[];
  errors: unknown[];
}

/** Subscribes to `store.wakes` with a recording listener. */
export async function probe(store: Store): Promise<Probe> {
  const p: Omit<Probe, 'sub'> = { hints: [], events: [], errors: [] };
  const sub = await store.wakes!.subscribe({
    wake(h) {
      p.hints.push(h);
      p.events.push('wake');
    },
    lost(e) {
      p.errors.push(e);
      p.events.push('lost');
    },
    restored() {
      p.events.push('restored');
    },
  });
  return { ...p, sub };
}

/**
 * The one restart test per server kind: a live subscription sees `lost` when the server stops and
 * `restored` once it is back, then a hint from a write made after the restart arrives; the same
 * store works again meanwhile.
 */
export async function subscriptionSurvivesRestart(
  store: Store,
  stop: () => Promise<void>,
  start: () => Promise<void>,
): Promise<Probe> {
  await store.setup();
  await store.create(timerSnapshot('restart-1', 100));
  const p = await probe(store);
  try {
    await stop();
    try {
      await until(() => p.events.includes('lost'), 'lost()');
    } finally {
      await start();
    }
    await until(() => p.events.includes('restored'), 'restored()', 60_000);
    // A new instance: the restarted server may have kept the data or not (CI's fresh clone starts
    // it from its own empty dir). Retried until the store answers again (a cluster may still settle).
    for (let tries = 0; ; tries++) {
      try {
        await store.create(timerSnapshot('restart-2', 4321));
        break;
      } catch (e) {
        // The first try was applied but its reply lost in the restart: written all the same.
        if ((e as { code?: string }).code === 'ALREADY_EXISTS') break;
        if (tries > 100) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await until(() => p.hints.some((h) => h.at === 4321), 'the hint of a save after the restart');
    return p;
  } finally {
    await p.sub.close();
  }
}
