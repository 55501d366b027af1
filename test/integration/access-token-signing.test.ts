import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { registerClient } from '../../core/clients/clients.service.js';
import { requestToken } from '../support/auth-helpers.js';
import { postToAuthServer } from '../support/oauth-flow-helpers.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { eventually } from '../support/waiting.js';

async function jwksKids(service: TestService): Promise<string[]> {
  const body = (await (await fetch(`${service.url}/svc/authserver/jwks`)).json()) as { keys: { kid: string }[] };
  return body.keys.map((k) => k.kid);
}

async function clientToken(service: TestService, app: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await requestToken(service, app);
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

async function introspect(service: TestService, app: { clientId: string; clientSecret: string }, token: string) {
  return (await (await postToAuthServer(service, '/oauth/introspect', app, { token })).json()) as { active: boolean };
}

async function newApp(service: TestService) {
  const { client, clientSecret } = await registerClient(service.services.clients, { name: 'signing app', scopes: ['otp'] });
  return { clientId: client.clientId, clientSecret: clientSecret as string };
}

/** The status of an enterprise call with `token`: 404 (an unknown OTP) is past the token check, 401 refused it. */
async function enterpriseStatus(service: TestService, token: string): Promise<number> {
  const res = await fetch(`${service.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return res.status;
}

async function allowListedApp(service: TestService) {
  const { client, clientSecret } = await registerClient(service.services.clients, {
    name: 'reload app',
    scopes: ['otp'],
    allowedIps: ['127.0.0.1'],
  });
  return { clientId: client.clientId, clientSecret: clientSecret as string };
}

describe('access-token signing algorithm', () => {
  test('when a client gets a token with the default settings, then it is ES256 and jose and oauth4webapi verify it from the published JWKS', async () => {
    const service = await startTestService('signalg-default', {}, { ownPublicUrl: true });
    try {
      const { clientId, clientSecret } = await newApp(service);
      const issuer = new URL(`${service.config.publicUrl}/svc/authserver`);
      const audience = `${service.config.publicUrl}/v1`;
      const config = await oidc.discovery(issuer, clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
      const { access_token: token } = await oidc.clientCredentialsGrant(config, { scope: 'otp' });
      expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });

      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string));
      const { payload } = await jwtVerify(token, jwks, { issuer: issuer.href, audience, typ: 'at+jwt' });
      expect(payload).toMatchObject({ sub: clientId, client_id: clientId, scope: 'otp' });

      // oauth4webapi's RFC 9068 resource-server check, as an API in front of us would run it.
      const request = new Request('http://127.0.0.1/resource', { headers: { authorization: `Bearer ${token}` } });
      const claims = await oauth.validateJwtAccessToken(config.serverMetadata(), request, audience, {
        [oauth.allowInsecureRequests]: true,
      });
      expect(claims).toMatchObject({ sub: clientId, client_id: clientId, iss: issuer.href });
    } finally {
      await service.close();
    }
  });

  test('when a service that signed RS256 restarts with the default, then its RSA key stays published and its tokens stay valid', async () => {
    // One deployment: the same database and the same server key (which seals the signing keys).
    const shared = {
      MONGODB_URI: testMongoUri(uniqueName('signalg-upgrade')),
      PUBLIC_URL: 'http://127.0.0.1:9',
      OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    const before = await startTestService('signalg-rs256', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    let app: { clientId: string; clientSecret: string };
    let oldToken: string;
    let oldKids: string[];
    try {
      app = await newApp(before);
      oldToken = await clientToken(before, app);
      oldKids = await jwksKids(before);
      expect(decodeProtectedHeader(oldToken).alg).toBe('RS256');
    } finally {
      await before.close();
    }
    const after = await startTestService('signalg-es256', shared);
    try {
      const kids = await jwksKids(after);
      expect(kids).toHaveLength(2);
      expect(kids).toContain(oldKids[0]);
      expect(await introspect(after, app, oldToken)).toMatchObject({ active: true });
      const newToken = await clientToken(after, app);
      expect(decodeProtectedHeader(newToken).alg).toBe('ES256');
      expect(await introspect(after, app, newToken)).toMatchObject({ active: true });
    } finally {
      await after.close();
    }
  });

  test('when API processes are restarted one by one from RS256 to ES256, then a process still on RS256 accepts the tokens of a restarted one', async () => {
    // One deployment: the same database and the same server key (which seals the signing keys).
    const shared = {
      MONGODB_URI: testMongoUri(uniqueName('signalg-rolling')),
      PUBLIC_URL: 'http://127.0.0.1:9',
      OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    const old = await startTestService('signalg-rolling-old', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    try {
      const { client, clientSecret } = await registerClient(old.services.clients, {
        name: 'rolling app',
        scopes: ['otp'],
        allowedIps: ['127.0.0.1'],
      });
      const app = { clientId: client.clientId, clientSecret: clientSecret as string };
      // The old process has loaded its keys (only the RSA key exists yet).
      expect(decodeProtectedHeader(await clientToken(old, app)).alg).toBe('RS256');
      const restarted = await startTestService('signalg-rolling-new', shared);
      try {
        const token = await clientToken(restarted, app);
        expect(decodeProtectedHeader(token).alg).toBe('ES256');
        const unknownOtp = await fetch(`${old.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000`, {
          headers: { authorization: `Bearer ${token}` },
        });
        // Past the token check: the OTP is unknown, the token is not.
        expect(unknownOtp.status).toBe(404);
        expect(await introspect(old, app, token)).toMatchObject({ active: true });
      } finally {
        await restarted.close();
      }
    } finally {
      await old.close();
    }
  });

  test('when tokens naming a made-up key are sent 20 times across the enterprise routes and introspection, then all are refused after at most one read of the stored keys', async () => {
    const service = await startTestService('signalg-made-up-kid');
    try {
      const { client, clientSecret } = await registerClient(service.services.clients, {
        name: 'made-up kid app',
        scopes: ['otp', 'users', 'notifications'],
        allowedIps: ['127.0.0.1'],
      });
      const app = { clientId: client.clientId, clientSecret: clientSecret as string };
      // The process has loaded its own keys: only what follows counts.
      await clientToken(service, app);
      let storeReads = 0;
      service.ctx.mongo.set('debug', (collection: string, method: string) => {
        if (collection === 'server_secrets' && method.startsWith('find')) storeReads += 1;
      });
      const { privateKey } = await generateKeyPair('ES256');
      const forged = () =>
        new SignJWT({ client_id: app.clientId, scope: 'otp users notifications' })
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'made-up' })
          .setIssuer(`${service.config.publicUrl}/svc/authserver`)
          .setAudience(`${service.config.publicUrl}/v1`)
          .setSubject(app.clientId)
          .setJti(randomBytes(8).toString('hex'))
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey);
      const someId = '00000000-0000-4000-8000-000000000000';
      // Each scope has its own bearer check, and introspection one more: the budget is the process's.
      const paths = ['/v1/svc-otp/' + someId, '/v1/users', '/v1/notifications/' + someId];
      for (let i = 0; i < 20; i += 1) {
        const token = await forged();
        if (i % 4 === 3) {
          expect(await introspect(service, app, token)).toEqual({ active: false });
          continue;
        }
        const res = await fetch(`${service.url}${paths[i % 4]}`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_token' });
      }
      expect(storeReads).toBeLessThanOrEqual(1);
    } finally {
      service.ctx.mongo.set('debug', false);
      await service.close();
    }
  });

  test('when a service goes back from ES256 to RS256, then the P-256 key stays published and its tokens stay valid', async () => {
    // One deployment: the same database and the same server key (which seals the signing keys).
    const shared = {
      MONGODB_URI: testMongoUri(uniqueName('signalg-back')),
      PUBLIC_URL: 'http://127.0.0.1:9',
      OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    const before = await startTestService('signalg-es-first', shared);
    let app: { clientId: string; clientSecret: string };
    let ecToken: string;
    try {
      app = await newApp(before);
      ecToken = await clientToken(before, app);
    } finally {
      await before.close();
    }
    const after = await startTestService('signalg-rs-after', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    try {
      expect(await jwksKids(after)).toContain(decodeProtectedHeader(ecToken).kid);
      expect(await introspect(after, app, ecToken)).toMatchObject({ active: true });
      expect(decodeProtectedHeader(await clientToken(after, app)).alg).toBe('RS256');
    } finally {
      await after.close();
    }
  });

  test('when ACCESS_TOKEN_SIGNING_ALG changes by a rolling restart, then the process still on RS256 publishes the P-256 key from its next read', async () => {
    const shared = {
      MONGODB_URI: testMongoUri(uniqueName('signalg-rolling-jwks')),
      PUBLIC_URL: 'http://127.0.0.1:9',
      OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      SIGNING_KEY_RELOAD_SECONDS: '1',
    };
    const old = await startTestService('signalg-rolling-jwks-old', { ...shared, ACCESS_TOKEN_SIGNING_ALG: 'RS256' });
    try {
      const app = await allowListedApp(old);
      expect(decodeProtectedHeader(await clientToken(old, app)).alg).toBe('RS256');
      const restarted = await startTestService('signalg-rolling-jwks-new', shared);
      try {
        const kid = decodeProtectedHeader(await clientToken(restarted, app)).kid as string;
        await eventually(async () => (await jwksKids(old)).includes(kid) || undefined, 5000);
      } finally {
        await restarted.close();
      }
    } finally {
      await old.close();
    }
  });

  test('when tokens are issued and checked, then no request reads the stored keys, only the periodic read does', async () => {
    const service = await startTestService('signalg-hot-path', { SIGNING_KEY_RELOAD_SECONDS: '1' });
    try {
      const app = await allowListedApp(service);
      await enterpriseStatus(service, await clientToken(service, app));
      let storeReads = 0;
      service.ctx.mongo.set('debug', (collection: string, method: string) => {
        if (collection === 'server_secrets' && method.startsWith('find')) storeReads += 1;
      });
      const first = Date.now();
      for (let i = 0; i < 20; i += 1) expect(await enterpriseStatus(service, await clientToken(service, app))).toBe(404);
      // Forty requests: at most one read per reload interval they took, not one per request.
      const intervals = Math.ceil((Date.now() - first) / 1000);
      expect(storeReads).toBeLessThanOrEqual(intervals + 1);
    } finally {
      service.ctx.mongo.set('debug', false);
      await service.close();
    }
  });
});
