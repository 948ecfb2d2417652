import { describe, expect, it } from 'vitest';
import { Alarm } from '../../src/worker/alarm.js';

describe('Alarm', () => {
  it('ring ends a sleep at once and asks for a round; unnamed rings make it poll every lane', async () => {
    let now = 1_000;
    const alarm = new Alarm(() => now);
    expect(alarm.beginRound(now, now + 10)).toBe(true); // the first round polls the lanes
    expect(alarm.beginRound(now, now + 10)).toBe(false);
    const slept = alarm.sleep(60_000);
    alarm.ring(true);
    await slept;
    expect(alarm.urgent).toBe(true);
    expect(alarm.beginRound(now, now + 10)).toBe(false); // named: lanes wait for the planned poll
    alarm.ring();
    expect(alarm.beginRound(now, now + 10)).toBe(true);
    expect(alarm.urgent).toBe(false);
    now += 10;
    expect(alarm.beginRound(now, now)).toBe(true); // the planned poll is due
  });

  it('a future wake time re-plans the sleep only when it is the new earliest; a past one rings', async () => {
    const now = 1_000;
    const alarm = new Alarm(() => now);
    alarm.beginRound(now, Number.POSITIVE_INFINITY);
    alarm.hear(5_000, true);
    expect(alarm.known.earliest).toBe(5_000);
    await alarm.sleep(60_000); // woken by the re-plan (a pending wake returns at once)
    alarm.hear(6_000, true); // later: no re-plan
    let ended = false;
    const s = alarm.sleep(20).then(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(ended).toBe(false);
    await s;
    expect(alarm.urgent).toBe(false);
    alarm.hear(999, false);
    expect(alarm.urgent).toBe(true);
    expect(alarm.lanesDue).toBe(true);
  });

  it('an unnamed wake time makes the round at that time poll every lane', () => {
    let now = 0;
    const alarm = new Alarm(() => now);
    alarm.beginRound(now, Number.POSITIVE_INFINITY);
    alarm.hear(100, false);
    alarm.hear(200, true);
    now = 150;
    expect(alarm.beginRound(now, Number.POSITIVE_INFINITY)).toBe(true);
    now = 250;
    expect(alarm.beginRound(now, Number.POSITIVE_INFINITY)).toBe(false);
    expect(alarm.known.earliest).toBeUndefined();
  });
});
