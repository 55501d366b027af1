import { storedSecretsOfClient, toClientMetadata } from '../../../api/auth-server/oidc-adapter.js';
import { acceptsClientSecret } from '../../../core/clients/client-secret-rotation.js';
import { hashClientSecret } from '../../../core/clients/client-secret.js';
import { makeClientWithSecret } from '../../support/client-fixtures.js';

const NOW = new Date('2026-11-25T10:00:00.000Z');
const inSeconds = (s: number) => new Date(NOW.getTime() + s * 1000);

describe('client secret grace period', () => {
  const current = 'current-secret';
  const previous = 'previous-secret';
  const stored = {
    secretHash: hashClientSecret(current),
    previousSecretHash: hashClientSecret(previous),
    previousSecretExpiresAt: inSeconds(60),
  };

  test('when the replaced secret is presented before its grace period ends, then it is accepted, like the current one', () => {
    expect(acceptsClientSecret(stored, current, NOW)).toBe(true);
    expect(acceptsClientSecret(stored, previous, NOW)).toBe(true);
    expect(acceptsClientSecret(stored, previous, inSeconds(59.999))).toBe(true);
  });

  test('when the grace period has ended, then only the current secret is accepted', () => {
    expect(acceptsClientSecret(stored, previous, inSeconds(60))).toBe(false);
    expect(acceptsClientSecret(stored, current, inSeconds(3600))).toBe(true);
  });

  test('when there is no replaced secret or a wrong secret is presented, then it is refused', () => {
    expect(acceptsClientSecret({ ...stored, previousSecretHash: null, previousSecretExpiresAt: null }, previous, NOW)).toBe(false);
    expect(acceptsClientSecret(stored, 'guess', NOW)).toBe(false);
    expect(acceptsClientSecret({ secretHash: null }, '', NOW)).toBe(false);
  });

  test('when the client goes to the authorization server, then the replaced secret and its end travel with it and read back the same', () => {
    const client = makeClientWithSecret(stored);
    const metadata = toClientMetadata(client);
    expect(metadata).toMatchObject({
      previous_secret_hash: stored.previousSecretHash,
      previous_secret_expires_at: inSeconds(60).getTime(),
    });
    // The provider's Client names the secret clientSecret and keeps extra metadata under its own name.
    const asProviderClient = { ...metadata, clientSecret: metadata.client_secret };
    expect(storedSecretsOfClient(asProviderClient)).toEqual(stored);
    expect(toClientMetadata({ ...client, previousSecretHash: null, previousSecretExpiresAt: null })).not.toHaveProperty(
      'previous_secret_hash',
    );
  });
});
