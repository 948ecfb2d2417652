import {
  documentFlow,
  type FlowCounterRef,
  type FlowDocument,
  type FlowDocumentCalls,
  type FlowDriver,
  flowRefId,
  type StoredFlowDocument,
} from '@stepfold/engine';
import type { Collection, Filter, IndexDescription } from 'mongodb';
import { isDuplicateKey } from './map-error.js';

/** A flow counter's document: `_id` names (scope, key, period), `v` is the version every change is conditional on. */
export interface FlowKeyDocument extends FlowDocument {
  _id: string;
  v: number;
}

/** The flow collection's indexes: counters in (scope, key, period) order for `list`, and holders for release and renew. */
export const FLOW_INDEXES: IndexDescription[] = [
  { key: { scope: 1, key: 1, period: 1 }, name: 'stepfold_flow_counter' },
  { key: { 'holds.holder': 1 }, name: 'stepfold_flow_holds' },
  { key: { 'waiting.holder': 1 }, name: 'stepfold_flow_waiting' },
];

const stored = ({ _id, v, ...doc }: FlowKeyDocument): StoredFlowDocument => ({ doc, version: v });

/** Counters after `a` in (scope, key, period) order. */
const after = (a: FlowCounterRef): Filter<FlowKeyDocument> => ({
  $or: [
    { scope: { $gt: a.scope } },
    { scope: a.scope, key: { $gt: a.key } },
    { scope: a.scope, key: a.key, period: { $gt: a.period } },
  ],
});

/**
 * The flow capability on MongoDB: a document per counter with its slots, starts and waiters, each
 * change a `replaceOne` (or `insertOne`, `deleteOne`) conditional on the version read.
 */
export function mongoFlow(docs: Collection<FlowKeyDocument>): FlowDriver & { setup(): Promise<void> } {
  const calls: FlowDocumentCalls = {
    async read(refs) {
      const found = await docs.find({ _id: { $in: refs.map(flowRefId) } }).toArray();
      return new Map(found.map((d) => [d._id, stored(d)]));
    },
    async write(ref, doc, version) {
      const _id = flowRefId(ref);
      if (doc === null)
        return version === null || (await docs.deleteOne({ _id, v: version })).deletedCount === 1;
      const next: FlowKeyDocument = { ...doc, _id, v: (version ?? 0) + 1 };
      if (version !== null) return (await docs.replaceOne({ _id, v: version }, next)).matchedCount === 1;
      try {
        await docs.insertOne(next);
        return true;
      } catch (e) {
        if (isDuplicateKey(e)) return false;
        throw e;
      }
    },
    async holding(holders) {
      const list = [...holders];
      const found = await docs
        .find({ $or: [{ 'holds.holder': { $in: list } }, { 'waiting.holder': { $in: list } }] })
        .toArray();
      return found.map(stored);
    },
    async page({ scope, after: from, limit }) {
      const parts: Array<Filter<FlowKeyDocument>> = [];
      if (scope !== undefined) parts.push({ scope });
      if (from) parts.push(after(from));
      const filter = parts.length === 0 ? {} : parts.length === 1 ? parts[0]! : { $and: parts };
      const found = await docs.find(filter).sort({ scope: 1, key: 1, period: 1 }).limit(limit).toArray();
      const end = found.length === limit ? found[found.length - 1] : undefined;
      return {
        docs: found.map(stored),
        last: end ? { scope: end.scope, key: end.key, period: end.period } : null,
      };
    },
  };
  return {
    ...documentFlow(calls, { name: 'mongodb' }),
    async setup() {
      // One index per command, as for the instances (FerretDB 1.x and several existing indexes).
      for (const index of FLOW_INDEXES) await docs.createIndexes([index]);
    },
  };
}
