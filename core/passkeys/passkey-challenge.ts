import { randomBytes } from 'node:crypto';

/** A WebAuthn challenge: 32 random bytes, base64url (what the browser echoes in clientDataJSON). */
export const generateChallenge = (): string => randomBytes(32).toString('base64url');
