import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { loadSigningKeys } from '../../core/auth/signing-key.service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { startTestService, uniqueName } from '../support/test-service.js';

async function jwksKids(url: string): Promise<string[]> {
  const body = (await (await fetch(`${url}/svc/authserver/jwks`)).json()) as { keys: { kid: string }[] };
  return body.keys.map((k) => k.kid);
}

/** The signing keys as MongoDB holds them (`server_secrets`), by name. */
async function storedSigningKeys(service: {
  ctx: { mongo: { collection: (name: string) => { find: (q: object) => { toArray: () => Promise<unknown[]> } } } };
}) {
  const rows = (await service.ctx.mongo
    .collection('server_secrets')
    .find({ name: { $in: ['access-token-signing-jwk', 'access-token-signing-jwk-es256'] } })
    .toArray()) as { name: string; value: unknown }[];
  return new Map(rows.map((row) => [row.name, row.value]));
}

/** A private signing JWK as an earlier version stored it: in clear, kid = thumbprint, alg and use set. */
async function clearJwk(alg: 'RS256' | 'ES256'): Promise<JWK> {
  const jwk = await exportJWK((await generateKeyPair(alg, { extractable: true })).privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg, use: 'sig' };
}

describe('access-token signing key', () => {
  test('when the service restarts on the same database, then it publishes the same key', async () => {
    const first = await startTestService('signkey');
    const kidsBefore = await jwksKids(first.url);
    await first.close();
    const second = await startTestService('signkey-again', {
      MONGODB_URI: first.config.mongodbUri,
      OTP_ENCRYPTION_KEY: first.config.otpEncryptionKey as string,
    });
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
      const encryptionKey = randomBytes(32);
      const keys = await Promise.all(
        connections.map((c) => loadSigningKeys(c, { signingKeyJwk: undefined, accessTokenSigningAlg: 'ES256' }, encryptionKey)),
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

  test('when the service generates its signing keys, then MongoDB holds their private halves only sealed with the server key', async () => {
    const service = await startTestService('signkey-sealed');
    try {
      const kids = await jwksKids(service.url);
      const stored = await storedSigningKeys(service);
      expect([...stored.keys()].sort()).toEqual(['access-token-signing-jwk', 'access-token-signing-jwk-es256']);
      for (const value of stored.values()) {
        expect(value).toEqual({
          publicJwk: expect.objectContaining({ kid: expect.any(String) }),
          privateJwkBox: expect.stringMatching(/^v1\./),
        });
        expect(JSON.stringify(value)).not.toContain('"d"');
        expect(kids).toContain((value as { publicJwk: { kid: string } }).publicJwk.kid);
      }
    } finally {
      await service.close();
    }
  });

  test('when an earlier version stored the signing keys in clear, then the next start keeps the same keys and seals them', async () => {
    const [rsa, ec] = await Promise.all([clearJwk('RS256'), clearJwk('ES256')]);
    const uri = testMongoUri(uniqueName('signkey-clear'));
    const mongo = await connectMongo(uri);
    try {
      await mongo.collection('server_secrets').insertMany([
        { name: 'access-token-signing-jwk', value: rsa, createdAt: new Date() },
        { name: 'access-token-signing-jwk-es256', value: ec, createdAt: new Date() },
      ]);
      const service = await startTestService('signkey-clear', { MONGODB_URI: uri });
      try {
        expect((await jwksKids(service.url)).sort()).toEqual([rsa.kid, ec.kid].sort());
        const stored = await storedSigningKeys(service);
        expect(stored.get('access-token-signing-jwk')).toEqual({
          publicJwk: expect.objectContaining({ kid: rsa.kid }),
          privateJwkBox: expect.any(String),
        });
        expect(stored.get('access-token-signing-jwk-es256')).toEqual({
          publicJwk: expect.objectContaining({ kid: ec.kid }),
          privateJwkBox: expect.any(String),
        });
      } finally {
        await service.close();
      }
    } finally {
      await mongo.close();
    }
  });
});
