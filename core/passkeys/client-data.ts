import { loadWebAuthn } from './webauthn-library.js';

const CHALLENGE_RE = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The challenge a WebAuthn answer claims to answer, read from its clientDataJSON before anything
 * else is checked, so the one challenge issued for it can be looked up (and used up). Undefined
 * for anything malformed; the full checks come after.
 */
export async function challengeOf(clientDataJSON: unknown): Promise<string | undefined> {
  const { isoBase64URL } = await loadWebAuthn();
  if (typeof clientDataJSON !== 'string' || !isoBase64URL.isBase64URL(clientDataJSON)) return undefined;
  try {
    const parsed = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' && CHALLENGE_RE.test(parsed.challenge) ? parsed.challenge : undefined;
  } catch {
    return undefined;
  }
}
