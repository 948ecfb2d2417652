import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import type { CallbackPort } from '../runner/callback-port.js';
import type { Snapshot } from '../snapshot.js';
import { callbackTarget } from './callback-target.js';
import {
  type CallbackClaims,
  callbackNonce,
  hmacKey,
  signCallback,
  verifyCallbackToken,
} from './callback-token.js';

export { type CallbackClaims, CallbackError, callbackInstance } from './callback-token.js';

/** Options of {@link callbackTokens}. */
export interface CallbackTokensOptions {
  /**
   * Secrets by key id, each at least 32 bytes (a string is taken as its UTF-8 bytes). Tokens are
   * signed with `current`; every key listed checks tokens, so a rotated-out key stays listed until
   * the tokens it signed have expired.
   */
  keys: Readonly<Record<string, string | Uint8Array>>;
  /** The key id new tokens are signed with (default: the only key, required when there are several). */
  current?: string | undefined;
  /** How long a token is good for unless `ctx.callback` says otherwise (default 7 days). */
  ttlMs?: number | undefined;
}

/** Callback tokens: passed to `createRunner({ callbacks })`, it issues (`ctx.callback`) and checks them. */
export interface CallbackTokens extends CallbackPort {
  /** The claims of a token, once signature and expiry are checked (`CALLBACK_INVALID`, `CALLBACK_EXPIRED`). */
  verify(token: string, now?: number): Promise<CallbackClaims>;
}

/** Default lifetime of a token: 7 days. */
export const DEFAULT_CALLBACK_TTL_MS = 7 * 24 * 3_600_000;
const MIN_SECRET_BYTES = 32;

const optionsError = (path: string, message: string) =>
  new ValidationError('INVALID_OPTIONS', 'invalid callbackTokens options', [{ path, message }]);

/**
 * Signed, expiring tokens that resume one waiting step once, for links in e-mails and third
 * parties' webhooks: a handler issues one with `ctx.callback(signal)`, and `runner.callback(token,
 * data)` (or the HTTP API's `POST /callbacks/:token`) applies the signal if that step is still
 * waiting at the iteration the token names. HMAC-SHA256 through WebCrypto, so it runs anywhere.
 *
 * @example
 * const callbacks = callbackTokens({ keys: { k1: process.env.CALLBACK_SECRET! } });
 * const runner = createRunner({ store, workflows: [expense], handlers: {
 *   mail: async (ctx) => outbox.send(`https://example.com/callbacks/${await ctx.callback('manager')}`),
 * }, callbacks });
 * await runner.callback(tokenFromTheLink, { decision: 'approve' });
 */
export function callbackTokens(options: CallbackTokensOptions): CallbackTokens {
  const ids = Object.keys(options.keys ?? {});
  if (ids.length === 0) throw optionsError('keys', 'give at least one key');
  const current = options.current ?? (ids.length === 1 ? ids[0]! : undefined);
  if (current === undefined || !ids.includes(current))
    throw optionsError('current', `name the signing key, one of ${ids.join(', ')}`);
  const ttlMs = options.ttlMs ?? DEFAULT_CALLBACK_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw optionsError('ttlMs', 'must be a positive integer (ms)');
  const secrets = new Map<string, Uint8Array>();
  for (const id of ids) {
    const raw = options.keys[id]!;
    const bytes = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw;
    if (!(bytes instanceof Uint8Array) || bytes.length < MIN_SECRET_BYTES)
      throw optionsError(`keys.${id}`, `must be at least ${MIN_SECRET_BYTES} bytes`);
    secrets.set(id, bytes);
  }
  const imported = new Map<string, Promise<CryptoKey>>();
  const key = (id: string): Promise<CryptoKey | null> => {
    const secret = secrets.get(id);
    if (!secret) return Promise.resolve(null);
    let k = imported.get(id);
    if (!k) {
      k = hmacKey(secret);
      imported.set(id, k);
    }
    return k;
  };
  return {
    async issue(definition: WorkflowDefinition, snapshot: Snapshot, signal: string, o, now) {
      const ttl = o.ttlMs ?? ttlMs;
      if (!Number.isSafeInteger(ttl) || ttl <= 0)
        throw new ValidationError('INVALID_OPTIONS', 'cannot issue a callback token', [
          { path: 'ttlMs', message: 'must be a positive integer (ms)' },
        ]);
      const target = callbackTarget(definition, snapshot, signal, o.step);
      const claims = {
        instance: snapshot.id,
        ...target,
        signal,
        expiresAt: now + ttl,
        nonce: callbackNonce(),
        keyId: current,
      };
      return signCallback(claims, (await key(current))!);
    },
    verify(token, now = Date.now()) {
      return verifyCallbackToken(token, key, now);
    },
  };
}
