import type { AuthenticationResponseJSON } from '@simplewebauthn/server';

export type PasskeyAnswer = AuthenticationResponseJSON;

/** What checking a passkey answer found (core/passkeys/passkey-sign-in.service.ts checks it). */
export type PasskeyOutcome =
  | { kind: 'signed-in'; userId: string }
  /** No passkey by that credential id in the enterprise of the app (removed, or never registered here). */
  | { kind: 'unknown-passkey' }
  /** The answer did not verify (signature, origin, relying party, user verification, counter). */
  | { kind: 'not-verified' }
  | { kind: 'not-active' }
  /** The user is blocked or deleted. */
  | { kind: 'refused' };

const B64URL_RE = /^[A-Za-z0-9_-]*$/;
const MAX_FIELD = 4096;
// The whole answer as one form field (the schema's maxLength); real ones are 1000 to 4000 characters.
const MAX_ANSWER = 6000;

const isB64url = (value: unknown, min = 1): value is string =>
  typeof value === 'string' && value.length >= min && value.length <= MAX_FIELD && B64URL_RE.test(value);

/**
 * The browser's answer to navigator.credentials.get as the sign-in page posts it (one form
 * field, JSON, binary fields base64url), or undefined when it is not one. Only the shape is
 * checked here; what it proves is checked by the passkey sign-in.
 */
export function parsePasskeyAnswer(field: unknown): PasskeyAnswer | undefined {
  if (typeof field !== 'string' || field.length > MAX_ANSWER) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const answer = parsed as Record<string, unknown>;
  const response = answer.response as Record<string, unknown> | undefined;
  if (!isB64url(answer.id) || answer.rawId !== answer.id || answer.type !== 'public-key' || !response || typeof response !== 'object')
    return undefined;
  if (!isB64url(response.clientDataJSON) || !isB64url(response.authenticatorData) || !isB64url(response.signature)) return undefined;
  if (response.userHandle !== undefined && !isB64url(response.userHandle)) return undefined;
  return {
    id: answer.id,
    rawId: answer.id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: response.clientDataJSON,
      authenticatorData: response.authenticatorData,
      signature: response.signature,
      ...(response.userHandle !== undefined ? { userHandle: response.userHandle } : {}),
    },
  };
}
