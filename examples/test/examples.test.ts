import { describe, expect, it } from 'vitest';
import { main as documentEntity } from '../dist/document-entity.js';
import { main as orderDemo } from '../dist/order-demo.js';
import { main as orderSaga, isExpected as orderSagaOk } from '../dist/order-saga.js';
import { main as readmeExample } from '../dist/readme-example.js';
import { isExpected as sellerOk, main as sellerRegistration } from '../dist/seller-registration.js';

describe('examples', () => {
  it('order demo completes after two failed payment attempts', async () => {
    const lines: string[] = [];
    const s = await orderDemo((l) => lines.push(l));
    expect(s.status).toBe('completed');
    expect(s.steps['charge-payment']?.attempt).toBe(3);
    expect(lines.filter((l) => l.includes('task.failed'))).toHaveLength(2);
    expect(s.output).toEqual({ sent: true, payment: 'P-1001' });
  });

  it('the README example runs as shown', async () => {
    const r = await readmeExample();
    expect(r.first.status).toBe('waiting');
    expect(r.final.status).toBe('completed');
    expect(r.harnessStatus).toBe('completed');
  });

  it('order saga: the declined charge releases the reservation and ends failed', async () => {
    const r = await orderSaga(() => {});
    expect(r.status).toBe('failed');
    expect(r.snapshot.error).toMatchObject({ code: 'DECLINED', step: 'charge-payment' });
    expect(r.calls).toEqual([
      'reserveStock',
      'chargePayment#1',
      'chargePayment#2',
      'chargePayment#3',
      'releaseStock',
    ]);
    expect(orderSagaOk(r)).toBe(true);
  });

  it('seller registration: past the pivot a flaky service parks in dlq; requeue completes it', async () => {
    const r = await sellerRegistration(() => {});
    expect(r.parkedStatus).toBe('dlq');
    expect(r.status).toBe('completed');
    expect(r.calls.filter((c) => c.startsWith('securityCheck'))).toEqual([
      'securityCheck#1',
      'securityCheck#2',
      'securityCheck#3',
      'securityCheck#4',
      'securityCheck#5',
      'securityCheck#6',
    ]);
    expect(sellerOk(r)).toBe(true);
  });

  it('document entity: bursts with redeliveries, batches of ≤ 8 or after 10 s quiet, continue-as-new', async () => {
    const lines: string[] = [];
    const r = await documentEntity((l) => lines.push(l));
    expect(r.redeliveries).toBe(3);
    expect(r.applied).toEqual(Array.from({ length: 24 }, (_, i) => i + 1)); // each edit once, in order
    expect(r.batches.map((b) => b.revs.length)).toEqual([8, 3, 4, 8, 1]);
    expect(r.batches.map((b) => [b.run, b.batch])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
      [2, 2],
      [3, 1],
    ]);
    expect(r.final).toMatchObject({ run: 3, status: 'waiting', wakeAt: null, inbox: [] });
    expect(lines.filter((l) => l.endsWith('redelivered: ignored'))).toHaveLength(3);
  });
});
