import type { ListQuery, Snapshot, Store } from '@stepfold/engine';
import { compareAsync, median, type Rate } from '../measure.js';
import { type Row, rateRow } from '../row.js';

// What the search rows of every store share: the instances (a `customerId` with ten instances per
// customer, a numeric `total` unique per instance), the two queries, and the rows' shape. Each
// store's group loads a large and a small store alongside and hands both to `searchRows`.

/** Instances per customer, on both stores: a customer's query returns ten on either. */
export const PER_CUSTOMER = 10;
/** The page size both queries ask for (more than ten, so a page holds every match). */
export const LIMIT = 50;

/** One loaded store of a search group: `rows` instances `i-<g>`, customer `c-<g mod rows/10>`, total g. */
export interface SearchSide {
  name: 'small' | 'large';
  rows: number;
  store: Pick<Store, 'list'>;
}

/** `STEPFOLD_SEARCH_ROWS` shrinks a group's large store for a quick trial run. */
export function largeRows(fallback: number): number {
  return Number(process.env['STEPFOLD_SEARCH_ROWS'] ?? fallback);
}

/** Instance `g` of a store of `rows`: `base` with its id, version 1, no wake and its attributes. */
export function searchInstance(base: Snapshot, g: number, rows: number): Snapshot {
  return {
    ...base,
    id: searchId(g),
    version: 1,
    wakeAt: null,
    search: { customerId: `c-${g % (rows / PER_CUSTOMER)}`, total: g },
  };
}

/** The id of instance `g`: `i-` and seven digits, so id order is load order. */
export const searchId = (g: number): string => `i-${String(g).padStart(7, '0')}`;

/** Every query must find what the load put there: ten instances of the customer, ten totals. */
function byCustomer(s: SearchSide) {
  return async () => {
    const c = Math.floor(Math.random() * (s.rows / PER_CUSTOMER));
    const page = await s.store.list({ where: { customerId: `c-${c}` }, limit: LIMIT });
    if (page.items.length !== PER_CUSTOMER) throw new Error(`${s.name}: c-${c} gave ${page.items.length}`);
  };
}

function byRange(s: SearchSide) {
  return async () => {
    const from = Math.floor(Math.random() * (s.rows - PER_CUSTOMER));
    const query: ListQuery = {
      where: { total: { gte: from, lt: from + PER_CUSTOMER } },
      orderBy: 'total',
      limit: LIMIT,
    };
    const page = await s.store.list(query);
    if (page.items.length !== PER_CUSTOMER) throw new Error(`${s.name}: ${from}… gave ${page.items.length}`);
  };
}

function row(name: string, large: Rate, small: Rate, note: string, extra: object): Row {
  return rateRow(name, large.hz, small.hz, 'queries/s', 0.8, {
    note,
    details: {
      largeSamples: large.samples.map(Math.round),
      smallSamples: small.samples.map(Math.round),
      roundRatioMedian: Math.round(median(large.samples.map((x, i) => x / small.samples[i]!)) * 1000) / 1000,
      ...extra,
    },
  });
}

/** What a group says about its rows: their name prefix, the sizes part of the note, extra details. */
export interface SearchRowsOf {
  /** `search-postgres`: the rows are it and `<it>-range`. */
  name: string;
  large: SearchSide;
  small: SearchSide;
  /** Ends both notes: sizes, connections, the server's caveat. */
  sizes: string;
  /** Ends the range row's note only (what that store does for a range). */
  rangeNote?: string;
  details: object;
  log(s: string): void;
  /** Sample window and rounds; the defaults (500 ms, 12) suit a query of about a millisecond. */
  sampleMs?: number;
  samples?: number;
}

/** Measures equality then the ordered range, each large against small alternately, as two rows. */
export async function searchRows(o: SearchRowsOf): Promise<Row[]> {
  const options = { concurrency: 1, warmupMs: 300, sampleMs: o.sampleMs ?? 500, samples: o.samples ?? 12 };
  o.log('measuring where customerId');
  const [el, es] = await compareAsync(byCustomer(o.large), byCustomer(o.small), options);
  o.log('measuring a range of total, ordered by it');
  const [rl, rs] = await compareAsync(byRange(o.large), byRange(o.small), options);
  return [
    row(
      o.name,
      el,
      es,
      `store.list({ where: { customerId }, limit: ${LIMIT} }) of a random customer (${PER_CUSTOMER} instances each); ${o.sizes}`,
      o.details,
    ),
    row(
      `${o.name}-range`,
      rl,
      rs,
      `store.list({ where: { total: { gte, lt } }, orderBy: total, limit: ${LIMIT} }) over ${PER_CUSTOMER} totals at a random place; ${o.sizes}${o.rangeNote ? `; ${o.rangeNote}` : ''}`,
      o.details,
    ),
  ];
}

/** The rows with `ours: null` and why, when the group's server does not answer. */
export function unmeasured(name: string, why: string): Row[] {
  return [name, `${name}-range`].map((n) => ({ ...rateRow(n, null, null, 'queries/s', 0.8), note: why }));
}

/** `1,000,000 vs 10,000 instances`. */
export function sizesOf(large: number, small: number): string {
  return `${large.toLocaleString('en-US')} vs ${small.toLocaleString('en-US')} instances`;
}

/** A group's progress line: `  <name> · <text> (<seconds since this call> s)`. */
export function progressLog(name: string): (s: string) => void {
  const start = performance.now();
  return (s) => console.log(`  ${name} · ${s} (${Math.round((performance.now() - start) / 1000)} s)`);
}

/** The small and the large side of a group, in that order, each with the store `storeOf` opens for it. */
export async function searchSides(
  sizes: Record<SearchSide['name'], number>,
  storeOf: (name: SearchSide['name']) => SearchSide['store'] | Promise<SearchSide['store']>,
): Promise<[small: SearchSide, large: SearchSide]> {
  const side = async (name: SearchSide['name']): Promise<SearchSide> => ({
    name,
    rows: sizes[name],
    store: await storeOf(name),
  });
  return [await side('small'), await side('large')];
}
