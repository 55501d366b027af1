import type { ClientWithSecret } from '../../core/clients/clients.repository.js';

/** A confidential first-party client of enterprise `acme` as the store returns it; override what a test is about. */
export function makeClientWithSecret(overrides: Partial<ClientWithSecret> = {}): ClientWithSecret {
  return {
    clientId: 'c1',
    enterpriseId: 'acme',
    name: 'App',
    scopes: ['otp'],
    allowedIps: [],
    redirectUris: [],
    webOrigins: [],
    isPublic: false,
    firstParty: true,
    secretHash: 'hmac-sha256$x$y',
    createdAt: new Date(0),
    ...overrides,
  };
}
