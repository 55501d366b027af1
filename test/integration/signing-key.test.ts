import { exportJWK, generateKeyPair } from 'jose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { loadSigningKeys } from '../../core/auth/signing-key.service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { startTestService, uniqueName } from '../support/test-service.js';

async function jwksKids(url: string): Promise<string[]> {
  const body = (await (await fetch(`${url}/svc/authserver/jwks`)).json()) as { keys: { kid: string }[] };
  return body.keys.map((k) => k.kid);
}

describe('access-token signing key', () => {
  test('when the service restarts on the same database, then it publishes the same key', async () => {
    const first = await startTestService('signkey');
    const kidsBefore = await jwksKids(first.url);
    await first.close();
    const second = await startTestService('signkey-again', { MONGODB_URI: first.config.mongodbUri });
    try {
      expect(kidsBefore).toHaveLength(2);
      expect(await jwksKids(second.url)).toEqual(kidsBefore);
    } finally {
      await second.close();
    }
  });

  test('when several processes bootstrap at once on an empty database, then they all end up with one key', async () => {
    const uri = testMongoUri(uniqueName('signrace'));
    const connections = await Promise.all(Array.from({ length: 5 }, () => connectMongo(uri)));
    try {
      const keys = await Promise.all(
        connections.map((c) => loadSigningKeys(c, { signingKeyJwk: undefined, accessTokenSigningAlg: 'ES256' })),
      );
      expect(new Set(keys.map((k) => k.tokens.kid)).size).toBe(1);
      expect(new Set(keys.map((k) => k.idTokens.kid)).size).toBe(1);
      const secrets = connections[0].collection('server_secrets');
      expect(await secrets.countDocuments({ name: 'access-token-signing-jwk' })).toBe(1);
      expect(await secrets.countDocuments({ name: 'access-token-signing-jwk-es256' })).toBe(1);
    } finally {
      await Promise.all(connections.map((c) => c.close()));
    }
  });

  test('when SIGNING_KEY_JWK is given and access tokens are RS256, then tokens are signed with it and JWKS publishes it', async () => {
    const jwk = await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey);
    const service = await startTestService('signkey-env', {
      SIGNING_KEY_JWK: JSON.stringify({ ...jwk, kid: 'configured-key-1' }),
      ACCESS_TOKEN_SIGNING_ALG: 'RS256',
    });
    try {
      const res = await fetch(`${service.url}/svc/authserver/jwks`);
      expect(await res.json()).toEqual({ keys: [{ kty: 'RSA', n: jwk.n, e: jwk.e, kid: 'configured-key-1', alg: 'RS256', use: 'sig' }] });
      expect(await service.ctx.mongo.collection('server_secrets').countDocuments({ name: 'access-token-signing-jwk' })).toBe(0);
    } finally {
      await service.close();
    }
  });
});
