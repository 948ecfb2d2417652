/**
 * A Durable Object storage in memory for Node tests: the key-value calls, transactions that apply
 * all or nothing, and an alarm. It counts every call, which is what the cost table is made of.
 */
import type { DurableStorage, StorageTransaction } from '../src/platform.js';

/** Calls made, by kind: a get, a put or delete, an alarm set or deleted. */
export interface StorageCounts {
  reads: number;
  writes: number;
  alarmWrites: number;
  transactions: number;
}

/** The fake, its alarm and data exposed, and its counters. */
export interface FakeStorage extends DurableStorage {
  data: Map<string, unknown>;
  alarm: number | null;
  counts: StorageCounts;
  /** Returns the counts so far and starts again from zero. */
  take(): StorageCounts;
}

const zero = (): StorageCounts => ({ reads: 0, writes: 0, alarmWrites: 0, transactions: 0 });

export function fakeStorage(): FakeStorage {
  const copy = <T>(v: T): T => (v === undefined ? v : structuredClone(v));
  const s: FakeStorage = {
    data: new Map(),
    alarm: null,
    counts: zero(),
    take() {
      const c = s.counts;
      s.counts = zero();
      return c;
    },
    async get<T>(key: string) {
      s.counts.reads++;
      return copy(s.data.get(key)) as T | undefined;
    },
    async put(key, value) {
      s.counts.writes++;
      s.data.set(key, copy(value));
    },
    async delete(key) {
      s.counts.writes++;
      return s.data.delete(key);
    },
    async getAlarm() {
      s.counts.reads++;
      return s.alarm;
    },
    async setAlarm(at) {
      s.counts.alarmWrites++;
      s.alarm = at;
    },
    async deleteAlarm() {
      s.counts.alarmWrites++;
      s.alarm = null;
    },
    async transaction(closure) {
      s.counts.transactions++;
      // Writes are buffered and applied only when the closure resolves.
      const puts = new Map<string, unknown>();
      const deletes = new Set<string>();
      let alarm: { at: number | null } | undefined;
      const txn: StorageTransaction = {
        async get<T>(key: string) {
          s.counts.reads++;
          if (deletes.has(key)) return undefined;
          return copy(puts.has(key) ? puts.get(key) : s.data.get(key)) as T | undefined;
        },
        async put(key, value) {
          s.counts.writes++;
          deletes.delete(key);
          puts.set(key, copy(value));
        },
        async delete(key) {
          s.counts.writes++;
          puts.delete(key);
          deletes.add(key);
          return s.data.has(key);
        },
        async setAlarm(at) {
          s.counts.alarmWrites++;
          alarm = { at };
        },
        async deleteAlarm() {
          s.counts.alarmWrites++;
          alarm = { at: null };
        },
      };
      const result = await closure(txn);
      for (const k of deletes) s.data.delete(k);
      for (const [k, v] of puts) s.data.set(k, v);
      if (alarm) s.alarm = alarm.at;
      return result;
    },
  };
  return s;
}
