import { describe, expect, it } from 'vitest';
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
});
