import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig } from '../../../core/platform/config/config.js';
import { readSettings } from '../../../core/platform/config/settings-reader.js';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };

/** A private RSA JWK of this modulus length, as SIGNING_KEY_JWK takes it. */
const rsaJwk = (modulusLength: number) =>
  JSON.stringify(generateKeyPairSync('rsa', { modulusLength }).privateKey.export({ format: 'jwk' }));

describe('configuration', () => {
  test('when only the stores are given, then defaults fill the rest and the result is frozen', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 8080,
      publicUrl: 'http://localhost:8080',
      trustProxy: false,
      shutdownDeadlineMs: 25000,
    });
    expect(config.concurrency).toEqual({ dispatch: 10, enrollment: 5, notification: 50 });
    expect(config.notifications).toEqual({
      streamsPerProcess: 1000,
      streamsEnterpriseSharePercent: 25,
      waitsPerProcess: 1000,
      waitsEnterpriseSharePercent: 25,
      sweepIntervalMs: 500,
      retentionDays: 90,
      callbackConcurrency: 10,
      callbackConcurrencyPerHost: 3,
      callbackConcurrencyPerEnterprise: 5,
      callbackCircuit: { failures: 5, coolDownMs: 30000 },
      callbackRetryBaseMs: 1000,
      callbackTimeoutMs: 10000,
      callbackAddresses: { allowLoopback: true, allowedNetworks: [] },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('when ACTIVATION_APP_URL is absent, then activation links open the example app of PUBLIC_URL; when set, that page; a fragment is refused', () => {
    expect(loadConfig({ ...base, NODE_ENV: 'development', PUBLIC_URL: 'https://id.example.com/' }).activationAppUrl).toBe(
      'https://id.example.com/demo/approver/',
    );
    expect(loadConfig({ ...base, ACTIVATION_APP_URL: 'https://app.example.com/activate' }).activationAppUrl).toBe(
      'https://app.example.com/activate',
    );
    expect(() => loadConfig({ ...base, ACTIVATION_APP_URL: 'https://app.example.com/#x' })).toThrow(/ACTIVATION_APP_URL/);
  });

  test('when several values are bad, then one error lists every bad key', () => {
    let caught: unknown;
    try {
      loadConfig({ REDIS_URL: 'http://nope', PORT: 'eighty', LOG_LEVEL: 'loud' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems.map((p) => p.split(':')[0])).toEqual(['LOG_LEVEL', 'MONGODB_URI', 'PORT', 'REDIS_URL']);
    expect((caught as ConfigError).message).toContain('PORT');
  });

  test('when production lacks secrets, then each missing secret is named', () => {
    expect(() => loadConfig({ ...base, NODE_ENV: 'production' })).toThrow(
      /ADMIN_TOKEN: is required in production[\s\S]*OTP_ENCRYPTION_KEY: is required in production[\s\S]*OTP_HMAC_KEY: is required in production/,
    );
  });

  test('when SIGN_IN_DEFAULT_LOCALE names a shipped language, then the pages default to it; another one stops the process', () => {
    expect(loadConfig(base).signInDefaultLocale).toBe('en');
    expect(loadConfig({ ...base, SIGN_IN_DEFAULT_LOCALE: 'fr' }).signInDefaultLocale).toBe('fr');
    expect(loadConfig({ ...base, SIGN_IN_DEFAULT_LOCALE: 'de' }).signInDefaultLocale).toBe('de');
    for (const refused of ['nl', 'fr-FR', '../en', 'EN']) {
      expect(() => loadConfig({ ...base, SIGN_IN_DEFAULT_LOCALE: refused })).toThrow(/SIGN_IN_DEFAULT_LOCALE/);
    }
  });

  test('when TRUST_PROXY is a hop count or a list, then it is passed on as such', () => {
    expect(loadConfig({ ...base, TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toBe('10.0.0.0/8, ::1');
  });

  test("when TRUST_PROXY is 'true' (trust every hop), then the process refuses to start and says what to give instead", () => {
    for (const value of ['true', 'TRUE']) {
      expect(() => loadConfig({ ...base, TRUST_PROXY: value })).toThrow(
        "TRUST_PROXY: 'true' would trust any X-Forwarded-For a caller writes (bypassing IP allow-lists and per-address limits); give the number of proxy hops in front of the service (e.g. 1) or the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)",
      );
    }
  });

  test('when TRUST_PROXY is neither a hop count nor addresses, then the bad entries are named', () => {
    expect(() => loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, proxy.local' })).toThrow(
      'TRUST_PROXY: must be false, a hop count (0-99) or a comma-separated list of addresses/CIDRs; not valid: proxy.local',
    );
    expect(() => loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/33' })).toThrow('not valid: 10.0.0.0/33');
  });

  test('when SIGNING_KEY_JWK is not a private RSA JWK, then the process refuses to start', () => {
    for (const value of ['not json', '{"kty":"EC","d":"x"}', '{"kty":"RSA","n":"a","e":"AQAB"}']) {
      expect(() => loadConfig({ ...base, SIGNING_KEY_JWK: value })).toThrow(/SIGNING_KEY_JWK: must be a private RSA JWK/);
    }
    expect(loadConfig({ ...base, SIGNING_KEY_JWK: rsaJwk(2048) }).signingKeyJwk).toContain('RSA');
  });

  test('when SIGNING_KEY_JWK is an RSA key under 2048 bits, then the process refuses to start', () => {
    // jose refuses such keys when tokens are verified (RFC 7518 3.3), and they are weak.
    expect(() => loadConfig({ ...base, SIGNING_KEY_JWK: rsaJwk(1024) })).toThrow(/SIGNING_KEY_JWK: .*2048 bits or more/);
    expect(loadConfig({ ...base, SIGNING_KEY_JWK: rsaJwk(3072) }).signingKeyJwk).toContain('RSA');
  });
});

describe('sign-in lifetimes', () => {
  test('when unset, then they keep their former values; when set, then they reach the configuration', () => {
    const defaults = loadConfig(base);
    expect(defaults.signIn).toEqual({ refreshTokenTtlSeconds: 2592000, sessionTtlSeconds: 86400, interactionTtlSeconds: 900 });
    expect(defaults.login).toMatchObject({ codeTtlSeconds: 300, familiarAddressSeconds: 7776000 });
    const set = loadConfig({ ...base, LOGIN_CODE_TTL_SECONDS: '120', SIGN_IN_SESSION_TTL_SECONDS: '3600' });
    expect(set.login.codeTtlSeconds).toBe(120);
    expect(set.signIn.sessionTtlSeconds).toBe(3600);
    expect(() => loadConfig({ ...base, LOGIN_CODE_TTL_SECONDS: '30' })).toThrow('LOGIN_CODE_TTL_SECONDS: must be >= 60');
  });
});

describe('settings read on their own', () => {
  test('when a pattern does not match, then the message says in words what is accepted', () => {
    expect(() => loadConfig({ ...base, OTP_ENCRYPTION_KEY: 'abc' })).toThrow('OTP_ENCRYPTION_KEY: must be 64 hex characters');
  });

  test('when a tool reads only some settings, then only those are checked, with defaults as the service has them', () => {
    expect(readSettings({}, ['CLIENT_SECRET_GRACE_SECONDS'])).toEqual({ values: { CLIENT_SECRET_GRACE_SECONDS: 86400 }, problems: [] });
    expect(readSettings({ CLIENT_SECRET_GRACE_SECONDS: '2592001' }, ['CLIENT_SECRET_GRACE_SECONDS']).problems).toEqual([
      'CLIENT_SECRET_GRACE_SECONDS: must be <= 2592000',
    ]);
  });
});

describe('Redis target', () => {
  const mongo = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x' };

  test('when REDIS_URL is given, then one Redis is used and the queue prefix is as given', () => {
    const config = loadConfig({ ...mongo, REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: 'idp' });
    expect(config.redis).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379' });
    expect(config.queuePrefix).toBe('idp');
  });

  test('when REDIS_CLUSTER_NODES is given, then the seeds are parsed and every key prefix is one hash tag', () => {
    const config = loadConfig({ ...mongo, REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-b.internal:7001,[::1]:7002 ', QUEUE_PREFIX: 'idp' });
    expect(config.redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(config.queuePrefix).toBe('{idp}');
  });

  test('when neither is given, then the process refuses to start naming both', () => {
    expect(() => loadConfig(mongo)).toThrow('REDIS_URL: is required (or REDIS_CLUSTER_NODES for a Redis Cluster)');
  });

  test('when both are given, then the process refuses to start instead of picking one', () => {
    expect(() => loadConfig({ ...mongo, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' })).toThrow(
      'REDIS_CLUSTER_NODES: give either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both',
    );
  });

  test('when a seed is not host:port, then the bad seeds are named', () => {
    expect(() => loadConfig({ ...mongo, REDIS_CLUSTER_NODES: '127.0.0.1:7000,redis://x:1,127.0.0.1:99999,nohost' })).toThrow(
      'REDIS_CLUSTER_NODES: must be comma-separated host:port seed nodes (e.g. 10.0.0.1:6379,10.0.0.2:6379); not valid: redis://x:1, 127.0.0.1:99999, nohost',
    );
    expect(() => loadConfig({ ...mongo, REDIS_CLUSTER_NODES: ' , ' })).toThrow(
      'REDIS_CLUSTER_NODES: must be comma-separated host:port seed nodes',
    );
  });
});
