import {
  aesGcmCodec,
  type Codec,
  collectPayloads,
  createMemoryPayloadStore,
  createMemoryStore,
  createRunner,
  defineCodec,
  defineWorkflow,
  type Encoded,
  isEncoded,
  offloading,
  readableSnapshot,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The codec itself (round trip, rotation, refusals), what a runner with one writes, and what it
// costs: values that did not change are not encrypted again.

const key = () => crypto.getRandomValues(new Uint8Array(32));

describe('aesGcmCodec', () => {
  it('round-trips any JSON value through an envelope naming its key id', async () => {
    const codec = aesGcmCodec({ keys: { k1: key() } });
    for (const value of [{ a: [1, 'two', null, { b: true }] }, 'text ✓ 😀', 42, null, false, []]) {
      const sealed = await codec.encode(value);
      expect(isEncoded(sealed)).toBe(true);
      expect(sealed).toMatchObject({
        $enc: 'aes-gcm',
        kid: 'k1',
        iv: expect.any(String),
        ct: expect.any(String),
      });
      expect(JSON.stringify(sealed)).not.toContain('two');
      expect(await codec.decode(sealed)).toEqual(value);
    }
    // A fresh IV each time: equal values do not give equal envelopes.
    const [a, b] = await Promise.all([codec.encode('same'), codec.encode('same')]);
    expect(a.ct).not.toBe(b.ct);
  });

  it('takes base64 text and CryptoKeys as keys', async () => {
    const raw = key();
    const b64 = btoa(String.fromCharCode(...raw));
    const cryptoKey = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
    const sealed = await aesGcmCodec({ keys: { k1: b64 } }).encode({ x: 1 });
    await expect(aesGcmCodec({ keys: { k1: cryptoKey } }).decode(sealed)).resolves.toEqual({ x: 1 });
  });

  it('rotates: new values use `current`, values under an older key id still decode', async () => {
    const k1 = key();
    const old = await aesGcmCodec({ keys: { k1 } }).encode({ v: 'old' });
    const rotated = aesGcmCodec({ keys: { k2: key(), k1 }, current: 'k2' });
    expect(await rotated.decode(old)).toEqual({ v: 'old' });
    expect((await rotated.encode({ v: 'new' })).kid).toBe('k2');
  });

  it('a missing key is CODEC_KEY_MISSING; a wrong key, altered text or a relabelled key id is CODEC_DECRYPT_FAILED', async () => {
    const k1 = key();
    const sealed = await aesGcmCodec({ keys: { k1 } }).encode({ secret: 1 });
    await expect(aesGcmCodec({ keys: { k9: key() } }).decode(sealed)).rejects.toMatchObject({
      code: 'CODEC_KEY_MISSING',
      kid: 'k1',
    });
    await expect(aesGcmCodec({ keys: { k1: key() } }).decode(sealed)).rejects.toMatchObject({
      code: 'CODEC_DECRYPT_FAILED',
    });
    const ct = sealed['ct']!;
    const flipped = { ...sealed, ct: `${ct[0] === 'A' ? 'B' : 'A'}${ct.slice(1)}` };
    await expect(aesGcmCodec({ keys: { k1 } }).decode(flipped)).rejects.toMatchObject({
      code: 'CODEC_DECRYPT_FAILED',
    });
    // The key id is bound in: the same key under another id does not decrypt it.
    const both = aesGcmCodec({ keys: { k1, k2: k1 }, current: 'k1' });
    await expect(both.decode({ ...sealed, kid: 'k2' })).rejects.toMatchObject({
      code: 'CODEC_DECRYPT_FAILED',
    });
  });

  it('refuses options it cannot work with: INVALID_OPTIONS naming the field', () => {
    const refused = (f: () => unknown, path: string) =>
      expect(f).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', issues: [expect.objectContaining({ path })] }),
      );
    refused(() => aesGcmCodec({ keys: {} }), 'keys');
    refused(() => aesGcmCodec({ keys: { k1: new Uint8Array(8) } }), 'keys.k1');
    refused(() => aesGcmCodec({ keys: { k1: 'not base64!' } }), 'keys.k1');
    refused(() => aesGcmCodec({ keys: { k1: key(), k2: key() } }), 'current');
    refused(() => aesGcmCodec({ keys: { k1: key() }, current: 'k3' }), 'current');
  });
});

const flow = defineWorkflow({
  name: 'five',
  version: 1,
  start: 's1',
  steps: {
    s1: { kind: 'task', handler: 'make', next: 's2' },
    s2: { kind: 'task', handler: 'make', next: 'gate' },
    gate: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'outputs.s2.secret' }, 'MARK-s2'] }, next: 'wait' }],
      otherwise: 'bad',
    },
    wait: { kind: 'wait', signal: 'go', next: 's3' },
    s3: { kind: 'task', handler: 'make', next: 's4' },
    s4: { kind: 'task', handler: 'make', input: { said: 'outputs.wait.said', who: 'input.who' } },
    bad: { kind: 'fail', error: { message: 'the condition did not read the output' } },
  },
});

/** A codec that counts its calls, over AES-GCM with `keys`. */
function counting(keys: Record<string, Uint8Array>) {
  const inner = aesGcmCodec({ keys });
  const calls = { encode: 0, decode: 0 };
  const codec: Codec = {
    encode(v) {
      calls.encode++;
      return inner.encode(v);
    },
    decode(e: Encoded) {
      calls.decode++;
      return inner.decode(e);
    },
  };
  return { codec: defineCodec(codec), calls };
}

const handlers = {
  make: async ({ step, input }: { step: string; input: unknown }) => ({ secret: `MARK-${step}`, input }),
};

describe('a runner with a codec', () => {
  it('runs a workflow whose conditions and data paths read encrypted data; the store holds none of it', async () => {
    const store = createMemoryStore();
    const { codec, calls } = counting({ k1: key() });
    const runner = createRunner({ store, workflows: [flow], handlers, codec });
    await runner.start('five', 'f-1', { who: 'MARK-input' });
    expect((await runner.get('f-1'))?.active).toEqual(['wait']);
    const done = await runner.signal('f-1', 'go', { said: 'MARK-signal' });
    expect(done.status).toBe('completed');
    expect(done.steps['s4']?.output).toEqual({
      secret: 'MARK-s4',
      input: { said: 'MARK-signal', who: 'MARK-input' },
    });
    // Each value encrypted once however many writes carried it: the input, the signal, four outputs.
    expect(calls.encode).toBe(6);
    const raw = JSON.stringify(await createRunner({ store, workflows: [flow], handlers }).store.load('f-1'));
    expect(raw).not.toContain('MARK');
    expect(raw).toContain('"kid":"k1"');
  });

  it('another process (another codec object, same keys) does not encrypt again what it loaded', async () => {
    const store = createMemoryStore();
    const keys = { k1: key() };
    const a = createRunner({ store, workflows: [flow], handlers, codec: counting(keys).codec });
    await a.start('five', 'f-1', { who: 'MARK-input' });
    const other = counting(keys);
    const b = createRunner({ store, workflows: [flow], handlers, codec: other.codec });
    await b.signal('f-1', 'go', { said: 'MARK-signal' });
    // Loaded once per write: the signal's data and the two outputs written after it, nothing loaded.
    expect(other.calls.encode).toBe(3);
  });

  it('reads rows written before it had a codec, and encrypts them on the next write', async () => {
    const store = createMemoryStore();
    const plain = createRunner({ store, workflows: [flow], handlers });
    await plain.start('five', 'f-1', { who: 'MARK-input' });
    expect(JSON.stringify(await store.load('f-1'))).toContain('MARK-input');
    const sealed = createRunner({
      store,
      workflows: [flow],
      handlers,
      codec: aesGcmCodec({ keys: { k1: key() } }),
    });
    const done = await sealed.signal('f-1', 'go', { said: 'x' });
    expect(done.steps['s4']?.output).toMatchObject({ input: { who: 'MARK-input' } });
    expect(JSON.stringify(await store.load('f-1'))).not.toContain('MARK');
  });

  it('takes a codec made by defineCodec: a bare one does not compile, and fails at createRunner', () => {
    const bare: Codec = { encode: async () => ({ $enc: 'x', kid: 'k' }), decode: async () => null };
    const options = { store: createMemoryStore(), workflows: [flow], handlers, codec: bare };
    // @ts-expect-error a bare Codec has no `wrap`: wrap it in defineCodec(...)
    expect(() => createRunner(options)).toThrow(TypeError);
  });

  it('stores offloaded bodies encrypted, and collecting needs the decoding store', async () => {
    const store = createMemoryStore();
    const payloads = createMemoryPayloadStore();
    const big = { make: async () => ({ rows: 'MARK-body '.repeat(500) }) };
    const runner = createRunner({
      store,
      workflows: [flow],
      handlers: big,
      codec: aesGcmCodec({ keys: { k1: key() } }),
      payloads: offloading({ store: payloads, threshold: 1024 }),
    });
    await runner.start('five', 'f-1', {});
    const done = await runner.signal('f-1', 'go', { said: 'x' });
    expect(done.status).toBe('failed'); // the gate compares s2's secret, which these outputs lack
    expect((await runner.get('f-1'))?.steps['s1']?.output).toEqual({ rows: 'MARK-body '.repeat(500) });
    const hashes = (await payloads.list('f-1', { limit: 10 })).items;
    expect(hashes.length).toBeGreaterThan(0);
    for (const h of hashes) expect(await payloads.get('f-1', h)).not.toContain('MARK');
    // Through the raw store the references are out of sight: refused rather than deleting live bodies.
    await expect(collectPayloads(store, payloads, 'f-1')).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(collectPayloads(runner.store, payloads, 'f-1')).resolves.toBe(0);
  });
});

describe('readableSnapshot', () => {
  it('decodes what its codec holds the key for and shows a marker for the rest', async () => {
    const store = createMemoryStore();
    const k1 = key();
    const runner = createRunner({ store, workflows: [flow], handlers, codec: aesGcmCodec({ keys: { k1 } }) });
    await runner.start('five', 'f-1', { who: 'MARK-input' });
    const raw = await store.load('f-1');
    expect((await readableSnapshot(raw))?.input).toBe('[encrypted k1]');
    expect((await readableSnapshot(raw, aesGcmCodec({ keys: { k1 } })))?.input).toEqual({
      who: 'MARK-input',
    });
    expect((await readableSnapshot(raw, aesGcmCodec({ keys: { k2: key() } })))?.input).toBe('[encrypted k1]');
    expect((await readableSnapshot(raw, aesGcmCodec({ keys: { k1: key() } })))?.input).toBe(
      '[encrypted k1: does not decrypt]',
    );
  });
});
