import { fetchPayload, HTTP_STATUS, isEncoded, maskEncoded, payloadRefs } from '@stepfold/engine';
import type { Hono } from 'hono';
import { fail, render, type Vars } from './app-context.js';
import type { InspectorParts } from './inspector-parts.js';
import { instancePath } from './views/format.js';
import { payloadPage } from './views/payloads.js';

/**
 * `GET /instances/:id/payloads/:sha`: the value of a payload the instance refers to, fetched when
 * asked (`?download=1`: the stored JSON as a file). Registered after the credential check, so it
 * answers only whom the instance page answers; it reads only payloads that instance's snapshot
 * refers to, so a link cannot be made up to read another owner's values. A missing or corrupt body
 * is `PAYLOAD_NOT_FOUND`, which the app's error page turns into a 404.
 */
export function payloadRoute(
  app: Hono<Vars>,
  parts: Pick<InspectorParts, 'store' | 'payloads' | 'codec'>,
): void {
  const { store, payloads, codec } = parts;
  app.get('/instances/:id/payloads/:sha', async (c) => {
    const id = c.req.param('id');
    const sha = c.req.param('sha');
    const back = instancePath(c.get('page').base, id);
    const notFound = (message: string) => fail(c, HTTP_STATUS['not-found'], 'Not found', message, back);
    if (!payloads) return notFound('Payloads are not configured in this inspector (its payloads option).');
    const s = await store.load(id);
    if (!s) return notFound(`No instance ${JSON.stringify(id)} in the store.`);
    const ref = payloadRefs(s).find((r) => r.sha256 === sha);
    if (!ref) return notFound(`${id} refers to no payload ${sha.slice(0, 12)}.`);
    const stored = await fetchPayload(payloads, ref);
    const body = codec ? await codec.openBody(stored) : masked(stored);
    if (c.req.query('download') !== undefined) {
      return c.body(body, 200, {
        'Content-Type': 'application/json; charset=utf-8',
        // The hash names the file: an instance id may hold characters a file name cannot.
        'Content-Disposition': `attachment; filename="payload-${ref.sha256.slice(0, 16)}.json"`,
      });
    }
    return render(c, payloadPage(c.get('page'), { id, ref, body }));
  });
}

/** A body stored encrypted, shown without the key: its marker as a JSON string. */
function masked(body: string): string {
  if (!body.startsWith('{"$enc"')) return body;
  const value: unknown = JSON.parse(body);
  return isEncoded(value) ? JSON.stringify(maskEncoded(value)) : body;
}
