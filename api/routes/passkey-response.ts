import type { Passkey } from '../../core/passkeys/passkeys.repository.js';

/** A passkey as the API shows it: no key material, no user handle. */
export function toPasskeyResponse(passkey: Passkey): Record<string, unknown> {
  return {
    id: passkey.id,
    name: passkey.name,
    credentialId: passkey.credentialId,
    transports: passkey.transports,
    deviceType: passkey.deviceType,
    backedUp: passkey.backedUp,
    aaguid: passkey.aaguid,
    createdAt: passkey.createdAt.toISOString(),
    ...(passkey.lastUsedAt ? { lastUsedAt: passkey.lastUsedAt.toISOString() } : {}),
  };
}
