import { finishedStatus, type InboxDriver, type SentRow } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { HANDOFF_MAX_CHARS, type HintRoute, scoreBound } from './encode.js';
import { CLAIM_SENT, DROP_SENT, SEND } from './inbox-scripts.js';
import type { Keys } from './keys.js';
import { runScript } from './scripts.js';

/**
 * A claim script's reply, `{entries read, {{id, json, {seq, event, …}}, …}}`, as the instances' JSON
 * and their signals, oldest first; each event stays text for the store kit to parse, so a corrupt
 * one is reported as its own row's, not the whole claim's.
 */
function sentRows([, rows]: [number, Array<[string, string, string[]]>]): SentRow[] {
  return rows.map(([, json, fields]) => {
    const sent: SentRow['sent'] = [];
    for (let i = 0; i + 1 < fields.length; i += 2)
      sent.push({ seq: Number(fields[i]), event: fields[i + 1]! });
    return { json, sent: sent.sort((a, b) => a.seq - b.seq) };
  });
}

/** The inbox's database calls on Redis: one script each (see inbox-scripts.ts). */
export function inboxDriver(
  client: Redis | Cluster,
  keys: Keys,
  route: HintRoute,
  maxSkipped: number,
): InboxDriver {
  const claim = async (args: Array<string | number>) =>
    sentRows(
      (await runScript(client, CLAIM_SENT, [keys.sentDue, keys.sentClaims], args)) as [
        number,
        Array<[string, string, string[]]>,
      ],
    );
  return {
    async append(id, entry, accept) {
      const appended = await runScript(
        client,
        SEND,
        [keys.instance(id), keys.sent(id), keys.sentSeq, keys.sentDue],
        [id, entry.json, entry.dueAt, entry.at, route.command, route.channel, HANDOFF_MAX_CHARS, ...accept],
      );
      return appended === 1 || (finishedStatus(appended) ?? false);
    },
    claim: (w) => claim([scoreBound(w.now), w.limit, scoreBound(w.until), maxSkipped, keys.prefix]),
    // With ids the script reads them at once and takes no lease: now, limit and expiry are unused.
    claimIds: (ids) => claim([0, ids.length, 0, 0, keys.prefix, ...ids]),
    async drop(id, seqs, version) {
      await runScript(
        client,
        DROP_SENT,
        [keys.instance(id), keys.sent(id), keys.sentDue, keys.sentClaims],
        [id, version, ...seqs],
      );
    },
  };
}
