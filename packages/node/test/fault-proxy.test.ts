import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from './soak/fault-proxy.mjs';

// An echo server behind the soak's fault proxy: what a client of the proxy sees under each fault.
let echo: net.Server;
let echoPort = 0;

beforeAll(async () => {
  echo = net.createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

/** A client connection: what it sent comes back, each reply with the order it arrived in. */
async function connect(proxy: FaultProxy) {
  const socket = net.connect(proxy.port, '127.0.0.1');
  const replies: Array<{ text: string; seq: number }> = [];
  let seq = 0;
  let error: (Error & { code?: string }) | null = null;
  let closed = false;
  socket.on('data', (d) => replies.push({ text: d.toString(), seq: seq++ }));
  socket.on('error', (e) => {
    error = e;
  });
  socket.on('close', () => {
    closed = true;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    text: () => replies.map((r) => r.text).join(''),
    error: () => error,
    closed: () => closed,
  };
}

/** Waits until `f` holds (checked every 10 ms), failing after 5 s. */
async function until(f: () => boolean) {
  for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
}

describe('soak fault proxy', () => {
  it('forwards both ways and counts connections and bytes', async () => {
    const proxy = await startFaultProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const c = await connect(proxy);
    c.socket.write('hello');
    await until(() => c.text() === 'hello');
    expect(proxy.stats).toMatchObject({ connections: 1, live: 1, bytesUp: 5, bytesDown: 5, resets: 0 });
    expect(proxy.url('postgres://u:p@db.example:5432/x')).toBe(`postgres://u:p@127.0.0.1:${proxy.port}/x`);
    c.socket.destroy();
    await until(() => proxy.stats.live === 0);
    await proxy.close();
  });

  it('holds each chunk for the latency, keeping their order', async () => {
    // A fixed "random" of 1: every chunk gets latency + jitter, 150 ms, in each direction.
    const proxy = await startFaultProxy({ target: { host: '127.0.0.1', port: echoPort }, random: () => 1 });
    proxy.setLatency(100, 50);
    const c = await connect(proxy);
    const sent = Date.now();
    for (const word of ['a', 'b', 'c']) c.socket.write(word);
    // Not there before one way's delay has passed: the latency is applied, not skipped.
    await new Promise((r) => setTimeout(r, 100));
    expect(c.text()).toBe('');
    await until(() => c.text() === 'abc');
    expect(Date.now() - sent).toBeGreaterThanOrEqual(300);
    proxy.setLatency(0);
    c.socket.write('d');
    await until(() => c.text() === 'abcd');
    c.socket.destroy();
    await proxy.close();
  });

  it('resets live connections (the client reads ECONNRESET) and a fraction of new ones', async () => {
    let coin = 0;
    const proxy = await startFaultProxy({
      target: { host: '127.0.0.1', port: echoPort },
      random: () => coin,
    });
    const a = await connect(proxy);
    const b = await connect(proxy);
    expect(proxy.resetAll()).toBe(2);
    await until(() => a.closed() && b.closed());
    expect(a.error()?.code).toBe('ECONNRESET');
    expect(b.error()?.code).toBe('ECONNRESET');

    // Every new connection is reset while the fraction is 1 (coin 0 < 1); none once it is 0.
    // (The reset may come before or after the client's connect completes: either way ECONNRESET.)
    proxy.resetNew(1);
    const c = net.connect(proxy.port, '127.0.0.1');
    const code = await new Promise((resolve) =>
      c.on('error', (e: Error & { code?: string }) => resolve(e.code)),
    );
    expect(code).toBe('ECONNRESET');
    proxy.resetNew(0.5);
    coin = 0.9;
    const d = await connect(proxy);
    d.socket.write('still here');
    await until(() => d.text() === 'still here');
    expect(proxy.stats.resets).toBe(3);
    d.socket.destroy();
    await proxy.close();
  });

  it('forwards all a server sent before closing, latency or not (an HTTP server done with a connection)', async () => {
    // Replies once and closes, like a server without keep-alive.
    const once = net.createServer((s) => {
      s.on('error', () => {});
      s.once('data', (d) => s.end(`re: ${d}`));
    });
    await new Promise<void>((resolve) => once.listen(0, '127.0.0.1', resolve));
    const proxy = await startFaultProxy({
      target: { host: '127.0.0.1', port: (once.address() as net.AddressInfo).port },
    });
    for (const ms of [0, 50]) {
      proxy.setLatency(ms);
      const c = await connect(proxy);
      c.socket.write('ask');
      await until(() => c.closed());
      expect(c.text()).toBe('re: ask');
      expect(c.error()).toBeNull();
    }
    await until(() => proxy.stats.live === 0);
    await proxy.close();
    await new Promise<void>((resolve) => once.close(() => resolve()));
  });

  it('holds connections silent in a blackhole, then releases what they sent', async () => {
    const proxy = await startFaultProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const old = await connect(proxy);
    const over = proxy.blackhole(300, 'release');
    expect(proxy.blackholed()).toBe(true);
    old.socket.write('old');
    // A new connection is accepted, but held like the others.
    const fresh = await connect(proxy);
    fresh.socket.write('new');
    await new Promise((r) => setTimeout(r, 200));
    expect([old.text(), fresh.text(), old.closed(), fresh.closed()]).toEqual(['', '', false, false]);
    await over;
    await until(() => old.text() === 'old' && fresh.text() === 'new');
    expect(proxy.stats.blackholes).toBe(1);
    old.socket.destroy();
    fresh.socket.destroy();
    await proxy.close();
  });

  it('resets the connections of a blackhole that ends with reset; new ones work again', async () => {
    const proxy = await startFaultProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const held = await connect(proxy);
    const over = proxy.blackhole(200, 'reset');
    held.socket.write('lost');
    await over;
    await until(() => held.closed());
    expect(held.error()?.code).toBe('ECONNRESET');
    expect(held.text()).toBe('');
    const after = await connect(proxy);
    after.socket.write('back');
    await until(() => after.text() === 'back');
    after.socket.destroy();
    await proxy.close();
  });
});
