// A small, careful timing loop: warm up, size a batch so one sample lasts `sampleMs`, take
// several samples, report the median rate. Each sample is a whole batch, so timer overhead and
// a single GC pause do not dominate; the median ignores the odd slow sample.

export interface MeasureOptions {
  /** Time spent running the function before any sample is kept (JIT, caches). */
  warmupMs?: number;
  /** Target duration of one sample. */
  sampleMs?: number;
  /** Number of samples kept; the reported rate is their median. */
  samples?: number;
}

export interface Rate {
  /** Median operations per second over the samples. */
  hz: number;
  /** Every sample's operations per second, in the order taken. */
  samples: number[];
  /** Operations per sample. */
  batch: number;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Milliseconds of CPU this process has used (user + system, all its threads, so GC helpers
 * count). Synchronous measurements use it instead of the wall clock: on a shared machine, time
 * spent descheduled while other processes run is not the code's cost.
 */
export const cpuNow = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function defaults(o: MeasureOptions): Required<MeasureOptions> {
  return { warmupMs: o.warmupMs ?? 1000, sampleMs: o.sampleMs ?? 500, samples: o.samples ?? 7 };
}

/**
 * Rate of a synchronous function (called with the running index, so it can vary its input), in
 * operations per CPU-second of this process (see {@link cpuNow}).
 */
export function measureSync(fn: (i: number) => unknown, options: MeasureOptions = {}): Rate {
  const o = defaults(options);
  let i = 0;
  let sink: unknown;
  const t0 = cpuNow();
  let n = 0;
  while (cpuNow() - t0 < o.warmupMs) {
    for (let k = 0; k < 16; k++) sink = fn(i++);
    n += 16;
  }
  const perOp = (cpuNow() - t0) / n;
  const batch = Math.max(1, Math.round(o.sampleMs / perOp));
  const samples: number[] = [];
  for (let s = 0; s < o.samples; s++) {
    const start = cpuNow();
    for (let k = 0; k < batch; k++) sink = fn(i++);
    samples.push(batch / ((cpuNow() - start) / 1000));
  }
  keep(sink);
  return { hz: median(samples), samples, batch };
}

/**
 * Rate of an asynchronous function. With `concurrency` c, c workers call it in parallel (each
 * gets its worker number, e.g. to use its own client) and the rate counts all their calls.
 */
export async function measureAsync(
  fn: (i: number, worker: number) => Promise<unknown>,
  options: MeasureOptions & { concurrency?: number } = {},
): Promise<Rate> {
  const o = defaults(options);
  const c = options.concurrency ?? 1;
  let i = 0;
  const runFor = async (count: number) => {
    let left = count;
    await Promise.all(
      Array.from({ length: c }, async (_, w) => {
        while (left > 0) {
          left--;
          await fn(i++, w);
        }
      }),
    );
  };
  const t0 = now();
  let n = 0;
  while (now() - t0 < o.warmupMs) {
    await runFor(c);
    n += c;
  }
  const perOp = (now() - t0) / n;
  const batch = Math.max(c, Math.round(o.sampleMs / perOp));
  const samples: number[] = [];
  for (let s = 0; s < o.samples; s++) {
    const start = now();
    await runFor(batch);
    samples.push(batch / ((now() - start) / 1000));
  }
  return { hz: median(samples), samples, batch };
}

/** {@link compareSync} for asynchronous contenders (same concurrency for both). */
export async function compareAsync(
  a: (i: number, worker: number) => Promise<unknown>,
  b: (i: number, worker: number) => Promise<unknown>,
  options: MeasureOptions & { concurrency?: number } = {},
): Promise<[Rate, Rate]> {
  const o = { ...defaults(options), concurrency: options.concurrency ?? 1 };
  const per = { ...o, samples: 1 };
  const ra: number[] = [];
  const rb: number[] = [];
  let batchA = 0;
  let batchB = 0;
  for (let r = 0; r < o.samples; r++) {
    const warm = r === 0 ? per : { ...per, warmupMs: Math.min(200, o.warmupMs) };
    // ABBA order: whoever runs second in a round is not always the same contender.
    let x: Rate;
    let y: Rate;
    if (r % 2 === 0) {
      x = await measureAsync(a, warm);
      y = await measureAsync(b, warm);
    } else {
      y = await measureAsync(b, warm);
      x = await measureAsync(a, warm);
    }
    ra.push(x.hz);
    rb.push(y.hz);
    batchA = x.batch;
    batchB = y.batch;
  }
  return [
    { hz: median(ra), samples: ra, batch: batchA },
    { hz: median(rb), samples: rb, batch: batchB },
  ];
}

/**
 * Runs two contenders alternately (A, B, A, B, ...), so drift in the machine (thermal, other
 * processes, GC heap growth) hits both alike; returns the median rate of each.
 */
export function compareSync(
  a: (i: number) => unknown,
  b: (i: number) => unknown,
  options: MeasureOptions = {},
): [Rate, Rate] {
  const o = defaults(options);
  const rounds = o.samples;
  const per = { ...o, samples: 1 };
  const ra: number[] = [];
  const rb: number[] = [];
  let batchA = 0;
  let batchB = 0;
  for (let r = 0; r < rounds; r++) {
    const warm = r === 0 ? per : { ...per, warmupMs: 100 };
    let x: Rate;
    let y: Rate;
    if (r % 2 === 0) {
      x = measureSync(a, warm);
      y = measureSync(b, warm);
    } else {
      y = measureSync(b, warm);
      x = measureSync(a, warm);
    }
    ra.push(x.hz);
    rb.push(y.hz);
    batchA = x.batch;
    batchB = y.batch;
  }
  return [
    { hz: median(ra), samples: ra, batch: batchA },
    { hz: median(rb), samples: rb, batch: batchB },
  ];
}

let blackhole: unknown;
/** Keeps a value alive so the optimizer cannot drop the work that produced it. */
export function keep(v: unknown): void {
  blackhole = v;
  if (blackhole === Symbol.for('never')) console.log('');
}
