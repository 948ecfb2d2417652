import { StepfoldError } from '../errors.js';

// A callback token is `sfcb1.<claims>.<mac>`: the claims as base64url JSON and an HMAC-SHA256 of
// `sfcb1.<claims>` under the key the claims name. WebCrypto only, so it signs and checks the same
// way on Node, Workers, Lambda and in a browser; the secret never leaves the process that holds it.

/** What a callback token says: the instance, run, step, iteration and signal it may resume, until when. */
export interface CallbackClaims {
  /** Instance id. */
  instance: string;
  /** The instance's run (continue-as-new counter) the token was issued in. */
  run: number;
  /** The step waiting for the signal. */
  step: string;
  /** The step's iteration the token resumes (a loop's next visit needs a new token). */
  iteration: number;
  /** The signal it applies. */
  signal: string;
  /** Epoch ms after which the token is refused (`CALLBACK_EXPIRED`). */
  expiresAt: number;
  /** Random, base64url: the signal's deduplication id is made from it. */
  nonce: string;
  /** Id of the key that signed it (rotation: old keys stay listed to check old tokens). */
  keyId: string;
}

/** Thrown for a token that is malformed, signed by an unknown key or forged, or expired. */
export class CallbackError extends StepfoldError<'CALLBACK_INVALID' | 'CALLBACK_EXPIRED'> {}

const PREFIX = 'sfcb1';
const encoder = new TextEncoder();

/** Bytes as base64url without padding. */
function toBase64Url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** base64url text as bytes; null when it is not base64url. */
function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** A random nonce of 16 bytes, base64url. */
export function callbackNonce(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

/** An HMAC-SHA256 key for signing and checking, from the secret's bytes. */
export function hmacKey(secret: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

/** The token of `claims`, signed with `key` (the key `claims.keyId` names). */
export async function signCallback(claims: CallbackClaims, key: CryptoKey): Promise<string> {
  const body = toBase64Url(
    encoder.encode(
      JSON.stringify({
        i: claims.instance,
        r: claims.run,
        s: claims.step,
        n: claims.iteration,
        g: claims.signal,
        e: claims.expiresAt,
        c: claims.nonce,
        k: claims.keyId,
      }),
    ),
  );
  const signed = `${PREFIX}.${body}`;
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(signed)));
  return `${signed}.${toBase64Url(mac)}`;
}

const invalid = (why: string) => new CallbackError('CALLBACK_INVALID', `callback token refused: ${why}`);

/**
 * The claims of `token` once its signature is checked with the key it names (`keys(keyId)`, null
 * for a key not held) and it has not expired at `now`. `CALLBACK_INVALID` for a malformed, unknown
 * or forged token (the signature is checked before anything in it is believed); `CALLBACK_EXPIRED`
 * for one past `expiresAt`.
 */
export async function verifyCallbackToken(
  token: string,
  keys: (keyId: string) => Promise<CryptoKey | null>,
  now: number,
): Promise<CallbackClaims> {
  if (typeof token !== 'string' || token.length > 4096) throw invalid('not a token');
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) throw invalid('not a stepfold callback token');
  const [, body, macText] = parts as [string, string, string];
  const json = fromBase64Url(body);
  const mac = fromBase64Url(macText);
  if (!json || !mac) throw invalid('not base64url');
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json)) as Record<string, unknown>;
  } catch {
    throw invalid('claims are not JSON');
  }
  const keyId = raw['k'];
  if (typeof keyId !== 'string') throw invalid('no key id');
  const key = await keys(keyId);
  if (!key) throw invalid(`signed with key "${keyId}", which this runner does not hold`);
  const ok = await crypto.subtle.verify(
    'HMAC',
    key,
    mac as BufferSource,
    encoder.encode(`${PREFIX}.${body}`),
  );
  if (!ok) throw invalid('signature does not match');
  const claims: CallbackClaims = {
    instance: raw['i'] as string,
    run: raw['r'] as number,
    step: raw['s'] as string,
    iteration: raw['n'] as number,
    signal: raw['g'] as string,
    expiresAt: raw['e'] as number,
    nonce: raw['c'] as string,
    keyId,
  };
  const strings = [claims.instance, claims.step, claims.signal, claims.nonce];
  const numbers = [claims.run, claims.iteration, claims.expiresAt];
  if (strings.some((s) => typeof s !== 'string') || numbers.some((n) => !Number.isSafeInteger(n)))
    throw invalid('claims are incomplete');
  if (now > claims.expiresAt)
    throw new CallbackError(
      'CALLBACK_EXPIRED',
      `callback token for ${claims.instance} (${claims.step}) expired at ${new Date(claims.expiresAt).toISOString()}`,
    );
  return claims;
}

/**
 * The instance a token names, read without checking its signature: only to route the request to
 * where the instance lives (a Durable Object), where `runner.callback` checks it. `CALLBACK_INVALID`
 * when the token has no readable instance id.
 */
export function callbackInstance(token: string): string {
  const body = typeof token === 'string' ? token.split('.')[1] : undefined;
  const json = body === undefined ? null : fromBase64Url(body);
  try {
    const id = json && (JSON.parse(new TextDecoder().decode(json)) as { i?: unknown }).i;
    if (typeof id === 'string' && id !== '') return id;
  } catch {
    // Falls through to the refusal below.
  }
  throw invalid('no instance id in it');
}
