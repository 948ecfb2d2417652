import { median } from './measure.js';

/** One comparison in the results table (and in results.json). */
export interface Row {
  name: string;
  /** Our figure, in `unit`. */
  ours: number | null;
  /** The baseline's figure, in `unit` (null when there is none or it could not run). */
  baseline: number | null;
  unit: string;
  /** Higher is better for us: ours/baseline for rates (a paired row: the median of its pairs' ratios), baseline/ours for costs. */
  ratio: number | null;
  /** The ratio we aim for; null when the row is informational. */
  goal: number | null;
  /** ratio >= goal; null without a goal or a ratio. */
  met: boolean | null;
  /** What the baseline is, caveats, why a figure is missing. */
  note?: string;
  /** Raw samples and settings, for whoever wants to check the medians. */
  details?: Record<string, unknown>;
  /** Seconds the group that produced this row took. */
  seconds?: number;
  /** When the row was measured (ISO). */
  at?: string;
}

/** A named set of rows measured together; `pnpm bench <name>` runs it alone. */
export interface Group {
  name: string;
  run(): Promise<Row[]>;
}

function finish(row: Omit<Row, 'met'>): Row {
  return { ...row, met: row.goal === null || row.ratio === null ? null : row.ratio >= row.goal };
}

/** A row where bigger figures are better (throughput): ratio = ours / baseline. */
export function rateRow(
  name: string,
  ours: number | null,
  baseline: number | null,
  unit: string,
  goal: number | null,
  extra: Pick<Row, 'note' | 'details'> = {},
): Row {
  const ratio = ours !== null && baseline !== null && baseline > 0 ? ours / baseline : null;
  return finish({ name, ours, baseline, unit, ratio, goal, ...extra });
}

/**
 * A rate row from paired samples, `baseline[i]` taken right after (or before) `ours[i]` and as
 * long: `ours` and `baseline` are the medians, and the ratio is the median of the pairs' ratios.
 * Each pair meets one machine state, so the ratio does not mix a fast round of one side with a
 * slow one of the other when the machine's load drifts between rounds; `details.ratioOfMedians`
 * keeps the other figure.
 */
export function pairedRateRow(
  name: string,
  ours: readonly number[],
  baseline: readonly number[],
  unit: string,
  goal: number | null,
  extra: Pick<Row, 'note' | 'details'> = {},
): Row {
  const pairs = ours.flatMap((o, i) => (baseline[i]! > 0 ? [o / baseline[i]!] : []));
  const row = rateRow(
    name,
    ours.length ? median(ours) : null,
    baseline.length ? median(baseline) : null,
    unit,
    goal,
  );
  return finish({
    ...row,
    ratio: pairs.length ? median(pairs) : null,
    ...extra,
    details: { ...extra.details, pairRatios: pairs, ratioOfMedians: row.ratio },
  });
}

/** A row where smaller figures are better (time, bytes): ratio = baseline / ours. */
export function costRow(
  name: string,
  ours: number | null,
  baseline: number | null,
  unit: string,
  goal: number | null,
  extra: Pick<Row, 'note' | 'details'> = {},
): Row {
  const ratio = ours !== null && baseline !== null && ours > 0 ? baseline / ours : null;
  return finish({ name, ours, baseline, unit, ratio, goal, ...extra });
}
