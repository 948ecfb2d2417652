/** The HTTP API's route parser: each route, each miss, the base path, and the ids it refuses. */
import { describe, expect, it } from 'vitest';
import { HTTP_STATUS, isHttpRoute, isStepfoldError, parseHttpRoute } from '../src/index.js';

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return isStepfoldError(e) ? e.code : 'not a stepfold error';
  }
  return undefined;
};

describe('parseHttpRoute', () => {
  it('names each route with its ids percent-decoded', () => {
    expect(parseHttpRoute('POST', '/workflows/order/instances/o%2F1')).toEqual({
      kind: 'start',
      workflow: 'order',
      id: 'o/1',
    });
    expect(parseHttpRoute('post', '/instances/o-1/signals/approve')).toEqual({
      kind: 'signal',
      id: 'o-1',
      name: 'approve',
    });
    expect(parseHttpRoute('POST', '/instances/o-1/cancel')).toEqual({ kind: 'cancel', id: 'o-1' });
    expect(parseHttpRoute('POST', '/instances/o-1/abort')).toEqual({ kind: 'abort', id: 'o-1' });
    expect(parseHttpRoute('GET', '/instances/o-1')).toEqual({ kind: 'get', id: 'o-1' });
    // One trailing slash names the same resource.
    expect(parseHttpRoute('GET', '/instances/o-1/')).toEqual({ kind: 'get', id: 'o-1' });
  });

  it('a path to nothing is NO_ROUTE (404); a route with another method is METHOD_NOT_ALLOWED (405)', () => {
    for (const path of [
      '/',
      '/instances',
      '/instances/',
      '/nowhere/at/all',
      '/instances/o-1/signals',
      '/instances/o-1/pause',
      '/instances/o-1/cancel/now',
      '/workflows/order/instances',
      '/workflows/order/instances/o-1/extra',
    ]) {
      const r = parseHttpRoute('POST', path);
      expect(r, path).toEqual({
        kind: 'no-route',
        status: 404,
        code: 'NO_ROUTE',
        message: `no route for POST ${path}`,
      });
      expect(isHttpRoute(r)).toBe(false);
    }
    expect(parseHttpRoute('DELETE', '/instances/o-1')).toMatchObject({
      kind: 'method-not-allowed',
      status: 405,
      code: 'METHOD_NOT_ALLOWED',
      allow: 'GET',
    });
    expect(parseHttpRoute('GET', '/instances/o-1/signals/approve')).toMatchObject({
      status: 405,
      allow: 'POST',
    });
    expect(parseHttpRoute('PUT', '/workflows/order/instances/o-1')).toMatchObject({
      status: 405,
      allow: 'POST',
    });
    expect(isHttpRoute(parseHttpRoute('GET', '/instances/o-1'))).toBe(true);
  });

  it('a workflow the deployment does not serve is NO_ROUTE, not the 500 of UNKNOWN_WORKFLOW', () => {
    const serves = (w: string) => w === 'order';
    expect(parseHttpRoute('POST', '/workflows/refund/instances/r-1', { serves })).toMatchObject({
      status: 404,
      code: 'NO_ROUTE',
    });
    expect(parseHttpRoute('POST', '/workflows/order/instances/o-1', { serves })).toMatchObject({
      kind: 'start',
    });
  });

  it('under a base path: the prefix is not part of the route, and a path outside it is NO_ROUTE', () => {
    for (const basePath of ['/api', '/api/']) {
      expect(parseHttpRoute('GET', '/api/instances/o-1', { basePath })).toEqual({ kind: 'get', id: 'o-1' });
      expect(parseHttpRoute('GET', '/instances/o-1', { basePath })).toMatchObject({ code: 'NO_ROUTE' });
      expect(parseHttpRoute('GET', '/apix/instances/o-1', { basePath })).toMatchObject({ code: 'NO_ROUTE' });
    }
  });

  it('an id, workflow or signal name that is not a valid id, or bad percent-encoding, throws INVALID_ID (400)', () => {
    expect(codeOf(() => parseHttpRoute('GET', `/instances/${'x'.repeat(201)}`))).toBe('INVALID_ID');
    expect(codeOf(() => parseHttpRoute('POST', '/workflows/order/instances/bad%20id'))).toBe('INVALID_ID');
    expect(codeOf(() => parseHttpRoute('POST', '/workflows/no%20such/instances/o-1'))).toBe('INVALID_ID');
    expect(codeOf(() => parseHttpRoute('POST', '/instances/o-1/signals/no%20pe'))).toBe('INVALID_ID');
    expect(codeOf(() => parseHttpRoute('GET', '/instances/%E0%A4%A'))).toBe('INVALID_ID');
    expect(codeOf(() => parseHttpRoute('POST', '/instances//cancel'))).toBe('INVALID_ID');
    expect(HTTP_STATUS.invalid).toBe(400);
  });
});
