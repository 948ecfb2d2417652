import { describe, expect, it } from 'vitest';
import { main as orderDemo } from '../dist/order-demo.js';
import { main as readmeExample } from '../dist/readme-example.js';

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
});
