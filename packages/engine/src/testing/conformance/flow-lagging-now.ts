import { expect, it } from 'vitest';
import type { FlowStore } from '../../store/flow.js';
import type { SuiteContext } from './context.js';
import { counter, freshFlow, heldBy, listAll, rate, T0 } from './flow-harness.js';

// Rate windows with callers whose `now` lags: a process reads its clock, then its call lands after
// a call of a later process. Whatever the later call pruned or released at its own `now`, the
// lagging call must still count every start of its own window, or it grants one too many.

const PERIOD = 1000;
const LIMIT = 10;
const need = [rate('lag', 'k', LIMIT, PERIOD)];

/** Ten starts at T0 .. T0 + 9: the window of a caller at T0 + 500 is full. */
async function fill(flow: FlowStore): Promise<void> {
  for (let i = 0; i < LIMIT; i++)
    expect((await flow.acquire(`s${i}`, `i-s${i}`, need, T0 + i, T0 + i + 10)).granted).toBe(true);
}

/** The rate part for callers whose clocks disagree. */
export function describeFlowLaggingNow(ctx: SuiteContext): void {
  it("a caller whose now lags a later caller's still counts every start of its own window", async () => {
    const { flow } = await freshFlow(ctx);
    await fill(flow);
    // A later caller: its window (T0 + 5, T0 + 1005] holds four starts, so it starts.
    expect((await flow.acquire('late', 'i-late', need, T0 + 1005, T0 + 1015)).granted).toBe(true);
    // A caller that read its clock at T0 + 500 lands now: its window holds the ten starts (and the
    // later one), so an eleventh is refused until two have left it.
    expect(await flow.acquire('lag', 'i-lag', need, T0 + 500, T0 + 510)).toEqual({
      granted: false,
      need: need[0],
      until: T0 + 1 + PERIOD,
      count: LIMIT + 1,
    });
  });

  it('a release at a later now keeps the starts a lagging caller still counts', async () => {
    const { flow } = await freshFlow(ctx);
    await fill(flow);
    expect((await flow.acquire('w', 'i-w', need, T0 + 20, T0 + 30)).granted).toBe(false);
    // The waiter is released by a caller whose window holds none of the starts.
    expect(await flow.release(['w'], T0 + 1020)).toEqual([]);
    expect(await flow.acquire('lag', 'i-lag', need, T0 + 500, T0 + 510)).toMatchObject({
      granted: false,
      count: LIMIT,
    });
  });

  it('list shows only the starts in the window of its now, and nothing once they all left it', async () => {
    const { flow } = await freshFlow(ctx);
    await fill(flow);
    expect((await flow.acquire('late', 'i-late', need, T0 + 1005, T0 + 1015)).granted).toBe(true);
    expect(heldBy(await counter(flow, T0 + 1005, 'lag', 'k', PERIOD))).toEqual([
      'late',
      's6',
      's7',
      's8',
      's9',
    ]);
    // A lagging listing sees its own window: every start.
    expect((await counter(flow, T0 + 500, 'lag', 'k', PERIOD))?.holders.length).toBe(LIMIT + 1);
    await flow.release(['late'], T0 + 1010);
    expect(await listAll(flow, T0 + 2005)).toEqual([]);
    expect(await listAll(flow, T0 + 3005)).toEqual([]);
  });

  it('a holder whose start left the window starts again, and that start counts', async () => {
    const { flow } = await freshFlow(ctx);
    const one = [rate('again', 'k', 1, PERIOD)];
    expect((await flow.acquire('h1', 'i-h1', one, T0, T0 + 10)).granted).toBe(true);
    expect((await flow.acquire('h1', 'i-h1', one, T0 + 1500, T0 + 1510)).granted).toBe(true);
    expect(await flow.acquire('h2', 'i-h2', one, T0 + 1600, T0 + 1610)).toEqual({
      granted: false,
      need: one[0],
      until: T0 + 1500 + PERIOD,
      count: 1,
    });
    expect((await counter(flow, T0 + 1600, 'again', 'k', PERIOD))?.holders).toEqual([
      { holder: 'h1', until: T0 + 1500 + PERIOD },
    ]);
  });
}
