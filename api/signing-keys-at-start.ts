import { SigningKeySealedWithAnotherKeyError } from '../core/auth/sealed-signing-jwk.js';
import type { Logger } from '../core/platform/logger/logger.js';

/**
 * Reads the signing keys once before the API listens. Keys this process cannot open stop the
 * start: left running, it would answer /readyz 200 and 500 to every token, JWKS and sign-in
 * request, so a load balancer or a rolling update would keep it. Any other failure (MongoDB gone
 * again since the connection) is only logged: the authorization server reads the keys per request.
 */
export async function readSigningKeysAtStart(signingKeys: () => Promise<unknown>, logger: Logger): Promise<void> {
  try {
    await signingKeys();
  } catch (err) {
    if (err instanceof SigningKeySealedWithAnotherKeyError) throw err;
    logger.warn({ err }, 'signing keys could not be read at start; the authorization server reads them on its first request');
  }
}
