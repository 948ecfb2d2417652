import type { Snapshot } from '../snapshot.js';
import type {
  DueClaims,
  Inbox,
  SaveOptions,
  SentDue,
  SentSignal,
  Store,
  Unreadable,
  WakeListener,
  WakeNotice,
  WakeSource,
} from '../store/store.js';
import type { Sealer } from './sealer.js';

// A store seen through a codec: every snapshot and sent signal is encoded on its way in and
// decoded on its way out, so the runner, its worker and its reducer only ever hold plaintext.
// Everything else (flow, stream, delete, listDue, a store's own extras) passes through as it is.

/**
 * `inner` with the instance data encoded by `sealer` on every write and decoded on every read.
 * A value that does not decode fails the read with the codec's error (`CODEC_KEY_MISSING`,
 * `CODEC_DECRYPT_FAILED`), so nothing is written from it; a claim reports it as unreadable.
 */
export function sealedStore(inner: Store, sealer: Sealer): Store {
  const open = (s: Snapshot) => sealer.openSnapshot(s);
  const own: { -readonly [K in keyof Store]?: Store[K] } = {
    create: async (s, options) => inner.create(await sealer.sealSnapshot(s), options),
    load: async (id) => {
      const s = await inner.load(id);
      return s === null || s === undefined ? s : open(s);
    },
    save: async (s, expected, options) =>
      inner.save(await sealer.sealSnapshot(s), expected, options && (await sealOptions(sealer, options))),
    list: async (query) => {
      const page = await inner.list(query);
      return { ...page, items: await Promise.all(page.items.map(open)) };
    },
  };
  if (inner.claims) own.claims = sealedClaims(inner.claims, sealer);
  if (inner.inbox) own.inbox = sealedInbox(inner.inbox, sealer);
  if (inner.wakes) own.wakes = sealedWakes(inner.wakes, sealer);
  // A proxy, not a copy: members this wrapper does not know (a store's own extras) stay reachable.
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(own, key)) return own[key as keyof Store];
      const v = Reflect.get(target, key);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** Save options as stored: the notice's snapshot and the consumed signals as they were read. */
async function sealOptions(sealer: Sealer, o: SaveOptions): Promise<SaveOptions> {
  const { consumed, matches } = o;
  if (!consumed?.length && !matches) return o;
  return {
    ...o,
    ...(consumed?.length
      ? {
          consumed: await Promise.all(
            consumed.map(async (p) => ({ seq: p.seq, event: await sealer.sealEvent(p.event) })),
          ),
        }
      : {}),
    ...(matches ? { matches: await sealer.asStored(matches) } : {}),
  };
}

/** Decodes each of `rows` with `decode`; one that fails is reported to `onUnreadable` and left out (else thrown). */
async function openEach<R, T>(
  rows: readonly R[],
  decode: (r: R) => Promise<T>,
  onUnreadable: Unreadable | undefined,
): Promise<T[]> {
  const out = await Promise.all(
    rows.map(async (r) => {
      try {
        return { ok: true as const, value: await decode(r) };
      } catch (e) {
        if (!onUnreadable) throw e;
        onUnreadable(e);
        return { ok: false as const };
      }
    }),
  );
  return out.flatMap((r) => (r.ok ? [r.value] : []));
}

function sealedClaims(claims: DueClaims, sealer: Sealer): DueClaims {
  return {
    claimDue: async (now, limit, query) =>
      openEach(await claims.claimDue(now, limit, query), (s) => sealer.openSnapshot(s), query?.onUnreadable),
    release: (ids, token) => claims.release(ids, token),
  };
}

const openSent = (sealer: Sealer, sent: SentSignal[]): Promise<SentSignal[]> =>
  Promise.all(sent.map(async (p) => ({ seq: p.seq, event: await sealer.openEvent(p.event) })));

function sealedInbox(inbox: Inbox, sealer: Sealer): Inbox {
  return {
    send: async (id, event, accept) => inbox.send(id, await sealer.sealEvent(event), accept),
    claim: async (now, limit, ids, onUnreadable) =>
      openEach(
        await inbox.claim(now, limit, ids, onUnreadable),
        async (due): Promise<SentDue> => ({
          snapshot: await sealer.openSnapshot(due.snapshot),
          sent: await openSent(sealer, due.sent),
        }),
        onUnreadable,
      ),
    drop: (id, seqs, version) => inbox.drop(id, seqs, version),
  };
}

function sealedWakes(wakes: WakeSource, sealer: Sealer): WakeSource {
  return {
    subscribe: (listener) =>
      wakes.subscribe({
        wake(notice) {
          if (!notice.snapshot && !notice.sent?.length) return listener.wake(notice);
          // A notice is a hint: one whose data does not decode still says the instance is due.
          openNotice(sealer, notice).then(
            (n) => listener.wake(n),
            () => listener.wake(bare(notice)),
          );
        },
        ...(listener.lost ? { lost: (e: unknown) => listener.lost!(e) } : {}),
        ...(listener.restored ? { restored: () => listener.restored!() } : {}),
      } satisfies WakeListener),
  };
}

async function openNotice(sealer: Sealer, n: WakeNotice): Promise<WakeNotice> {
  const [snapshot, sent] = await Promise.all([
    n.snapshot && sealer.openSnapshot(n.snapshot),
    n.sent && openSent(sealer, n.sent),
  ]);
  return { ...n, ...(snapshot ? { snapshot } : {}), ...(sent ? { sent } : {}) };
}

/** The notice without the instance data it carried. */
function bare(n: WakeNotice): WakeNotice {
  const { snapshot: _s, sent: _p, ...rest } = n;
  return rest;
}
