// Future wake times a worker has heard of (wake notices, its own writes), so it can sleep until the
// earliest instead of polling. A time whose instance nobody named (a notice without an id, or one
// the poller could not remember) is marked: the round at that time must poll every lane to find it.

/** Wake times heard of: ascending, distinct, bounded (later ones are left to polling). */
export class WakeTimes {
  private readonly times: number[] = [];
  private readonly unnamed: number[] = [];

  constructor(private readonly max: number) {}

  /** The earliest time heard of, if any. */
  get earliest(): number | undefined {
    return this.times[0];
  }

  /** Remembers `at`; true when it is the new earliest (the sleep should be re-planned). */
  add(at: number, named: boolean): boolean {
    if (!named) insert(this.unnamed, at, this.max);
    return insert(this.times, at, this.max) === 0;
  }

  /** Forgets every time up to `now` (a round then polled); true if one of them was unnamed. */
  pass(now: number): boolean {
    while (this.times.length > 0 && this.times[0]! <= now) this.times.shift();
    let unnamed = false;
    while (this.unnamed.length > 0 && this.unnamed[0]! <= now) {
      this.unnamed.shift();
      unnamed = true;
    }
    return unnamed;
  }
}

/** Inserts `at` into ascending `list` unless there; its index, or -1 (there already, or dropped past `max`). */
function insert(list: number[], at: number, max: number): number {
  let i = list.length;
  while (i > 0 && list[i - 1]! > at) i--;
  if (list[i - 1] === at) return -1;
  list.splice(i, 0, at);
  if (list.length > max) list.pop();
  return i < list.length ? i : -1;
}
