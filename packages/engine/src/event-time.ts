/** Latest time an event may carry, in epoch ms (the largest valid JavaScript date). */
export const MAX_EVENT_TIME = 8.64e15;

/** A time an event may carry: an integer from 0 to {@link MAX_EVENT_TIME} ms (the `at` of every event). */
export const isTime = (v: unknown): v is number =>
  Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_EVENT_TIME;
