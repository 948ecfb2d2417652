import {
  SENT_CLAIM_AFTER_MS,
  type SentDue,
  type SentSignal,
  type StoreKit,
  type WorkflowEvent,
} from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { HANDOFF_MAX_CHARS, type HintRoute, scoreBound } from './encode.js';
import { CLAIM_SENT, DROP_SENT, SEND } from './inbox-scripts.js';
import type { Keys } from './keys.js';
import { runScript } from './scripts.js';

/** `Store.send`, `claimSent` and `dropSent` of a Redis store (see inbox-scripts.ts). */
export function inboxMethods(
  client: Redis | Cluster,
  kit: StoreKit,
  keys: Keys,
  route: HintRoute,
  claimMs: number,
) {
  const decode = (reply: Array<[string, string, string[]]>): SentDue[] =>
    reply.map(([, json, fields]) => {
      const sent: SentSignal[] = [];
      for (let i = 0; i + 1 < fields.length; i += 2)
        sent.push({ seq: Number(fields[i]), event: JSON.parse(fields[i + 1]!) as WorkflowEvent });
      sent.sort((a, b) => a.seq - b.seq);
      return { snapshot: kit.decode(json), sent };
    });
  return {
    async send(id: string, event: WorkflowEvent, accept: readonly string[]): Promise<boolean> {
      const valid = kit.id(id);
      const at = Math.floor(event.at);
      const appended = await kit.guard('send', () =>
        runScript(
          client,
          SEND,
          [keys.instance(valid), keys.sent(valid), keys.sentSeq, keys.sentDue],
          [
            valid,
            JSON.stringify(event),
            String(at + SENT_CLAIM_AFTER_MS),
            String(at),
            route.command,
            route.channel,
            HANDOFF_MAX_CHARS,
            ...accept,
          ],
        ),
      );
      return appended === 1;
    },
    async claimSent(now: number, limit: number, ids?: readonly string[]): Promise<SentDue[]> {
      const named = ids === undefined ? [] : Array.from(ids, (x) => kit.id(x));
      if (ids !== undefined && named.length === 0) return [];
      const n = ids === undefined ? kit.dueLimit(now, limit) : named.length;
      if (n === null || now === Number.NEGATIVE_INFINITY) return [];
      const reply = (await kit.guard('claimSent', () =>
        runScript(
          client,
          CLAIM_SENT,
          [keys.sentDue, keys.sentClaims],
          [scoreBound(now), n, scoreBound(now + claimMs), keys.prefix, ...named],
        ),
      )) as Array<[string, string, string[]]>;
      return decode(reply);
    },
    async dropSent(id: string, seqs: readonly number[], version: number): Promise<void> {
      if (seqs.length === 0) return;
      const valid = kit.id(id);
      await kit.guard('dropSent', () =>
        runScript(
          client,
          DROP_SENT,
          [keys.instance(valid), keys.sent(valid), keys.sentDue, keys.sentClaims],
          [valid, String(version), ...kit.seqs(seqs)],
        ),
      );
    },
  };
}
