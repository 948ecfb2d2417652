import { createMemoryStore, createRunner, type Runner, type Store } from '@stepfold/engine';
import { createInspector } from '@stepfold/inspector';
import fc from 'fast-check';
import type { Target } from '../driver.js';
import { expect } from '../guard.js';
import { deep, PROTO_JSON } from '../hostile.js';
import { seedDefinitions, seedHandlers } from '../seeds.js';

// Inspector form posts: random bodies to the instance and schedule action routes, signed in or
// not. The answer is a 2xx, 3xx or 4xx page (a 5xx only for an unavailable store, which this one
// never is), and a refused post leaves the instance as it was.

const TOKEN = 'fuzz-token-0123456789';

interface InspectorContext {
  store: Store;
  runner: Runner;
  app: { request(path: string, init: RequestInit): Response | Promise<Response> };
  next: number;
}

type Post = {
  seed: number;
  route: string;
  auth: 'bearer' | 'none' | 'wrong' | 'cookie';
  version: 'current' | 'stale' | string;
  fields: Record<string, string>;
  encoding: 'form' | 'multipart' | 'json' | 'garbage';
};

const value = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'approve',
      'reject',
      'manager',
      'approved',
      'go',
      'receipt',
      'draft',
      'reserve',
      'hu',
      'w',
      'ada',
      '',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '{}',
      '{"n":1}',
      PROTO_JSON,
      '{"decision":"approve"}',
      '[]',
      'null',
      '{',
      '1e308',
      '__proto__',
      'constructor',
      ' a b ',
      'x'.repeat(3000),
      '\u0000',
      '<script>alert(1)</script>',
      JSON.stringify(deep(600, 'object')),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

const postArb = (seeds: number): fc.Arbitrary<Post> =>
  fc.record({
    seed: fc.nat(seeds - 1),
    route: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('decide', 'signal', 'cancel', 'abort', 'requeue') },
      {
        weight: 1,
        arbitrary: fc.constantFrom('delete', '__proto__', 'constructor', '..', '%00', 'toString'),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '/schedules/s-1/pause',
          '/schedules/s-1/trigger',
          '/schedules/__proto__/resume',
          '/schedules/x/nope',
          '/logout',
          '/instances/%2e%2e/cancel',
        ),
      },
    ),
    auth: fc.constantFrom('bearer', 'bearer', 'bearer', 'bearer', 'none', 'wrong', 'cookie'),
    version: fc.oneof(
      { weight: 6, arbitrary: fc.constant('current') },
      { weight: 1, arbitrary: fc.constant('stale') },
      { weight: 1, arbitrary: value },
    ),
    fields: fc.dictionary(
      fc.oneof(
        {
          weight: 5,
          arbitrary: fc.constantFrom(
            'step',
            'decision',
            'by',
            'comment',
            'name',
            'payload',
            'reason',
            'patch',
            '_csrf',
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'version[]', '') },
      ),
      value,
      { maxKeys: 6 },
    ),
    encoding: fc.constantFrom('form', 'form', 'form', 'multipart', 'json', 'garbage'),
  });

function bodyOf(p: Post, version: string): { body: BodyInit; type?: string } {
  const fields = { ...p.fields, version };
  switch (p.encoding) {
    case 'form':
      return { body: new URLSearchParams(Object.entries(fields)) };
    case 'multipart': {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      return { body: f };
    }
    case 'json':
      return { body: JSON.stringify(fields), type: 'application/x-www-form-urlencoded' };
    case 'garbage':
      return { body: `--x\r\n${JSON.stringify(fields)}\r\n--`, type: 'multipart/form-data; boundary=y' };
  }
}

function headersOf(auth: Post['auth'], type: string | undefined): Record<string, string> {
  const h: Record<string, string> = type ? { 'content-type': type } : {};
  if (auth === 'bearer') h['authorization'] = `Bearer ${TOKEN}`;
  if (auth === 'wrong') h['authorization'] = 'Bearer wrong-token-000000';
  if (auth === 'cookie') h['cookie'] = 'stepfold_session=forged; stepfold_csrf=forged';
  return h;
}

export const inspector: Target<Post, InspectorContext> = {
  name: 'inspector',
  runs: 3_000,
  budgetMs: 3_000,
  async open() {
    const store = createMemoryStore();
    const workflows = seedDefinitions().filter(
      (d) => !Object.values(d.steps).some((s) => s.kind === 'child' || s.kind === 'map'),
    );
    const runner = createRunner({ store, workflows, handlers: seedHandlers(), execute: false });
    const app = createInspector({ store, workflows, auth: { token: TOKEN }, loginRateLimit: false });
    return { store, runner, app, next: 0 };
  },
  arbitrary() {
    return postArb(5);
  },
  async check(p, c) {
    const id = `insp-${++c.next}`;
    const names = ['expense', 'approval', 'list-form', 'every-kind', 'order'];
    const s = await c.runner.start(names[p.seed]!, id, { amount: 3, n: 2 });
    const before = JSON.stringify(await c.store.load(id));
    const version =
      p.version === 'current' ? String(s.version) : p.version === 'stale' ? String(s.version + 7) : p.version;
    const { body, type } = bodyOf(p, version);
    const path = p.route.startsWith('/') ? `/ops${p.route}` : `/ops/instances/${id}/${p.route}`;
    const logged: unknown[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => logged.push(args);
    let res: Response;
    try {
      res = await c.app.request(path, { method: 'POST', headers: headersOf(p.auth, type), body });
    } finally {
      console.error = error;
    }
    const after = JSON.stringify(await c.store.load(id));
    expect(
      res.status < 500,
      () =>
        `${path} answered ${res.status}: ${String((logged[0] as unknown[] | undefined)?.[1] ?? '').slice(0, 300)}`,
    );
    if (res.status >= 400)
      expect(after === before, () => `${path} refused (${res.status}) but changed ${id}`);
    if (p.auth !== 'bearer')
      expect(after === before, () => `${path} without a valid credential changed ${id} (${res.status})`);
    await res.arrayBuffer();
  },
};
