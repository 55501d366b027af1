import { loadConfig } from '../../../core/platform/config/config.js';

const base = { NODE_ENV: 'development', MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('passkey configuration', () => {
  test('when nothing is set, then the relying party is the host of PUBLIC_URL and its origin the one allowed', () => {
    expect(loadConfig({ ...base, PUBLIC_URL: 'https://id.example.com/base' }).passkeys).toEqual({
      rpId: 'id.example.com',
      origins: ['https://id.example.com'],
    });
    // A plain-http public URL still starts (browsers then offer no passkeys there).
    expect(loadConfig({ ...base, PUBLIC_URL: 'http://svc.internal:8080' }).passkeys.origins).toEqual(['http://svc.internal:8080']);
  });

  test('when a parent domain and several origins within it are set, then they are taken', () => {
    const config = loadConfig({
      ...base,
      PUBLIC_URL: 'https://id.example.com',
      PASSKEY_RP_ID: 'Example.com',
      PASSKEY_ORIGINS: 'https://id.example.com, https://app.example.com:8443/',
    });
    expect(config.passkeys).toEqual({ rpId: 'example.com', origins: ['https://id.example.com', 'https://app.example.com:8443'] });
  });

  test('when an origin is outside the relying party id, plain http off localhost, or not an origin, then the process does not start', () => {
    const load = (origins: string) => () => loadConfig({ ...base, PUBLIC_URL: 'https://id.example.com', PASSKEY_ORIGINS: origins });
    expect(load('https://evil.example')).toThrow(/PASSKEY_ORIGINS: https:\/\/evil.example is not within PASSKEY_RP_ID id.example.com/);
    expect(load('http://id.example.com')).toThrow(/must be https \(http only on localhost\)/);
    expect(load('https://id.example.com/login')).toThrow(/is not an origin/);
    expect(load('not a url')).toThrow(/is not an origin/);
    expect(() => loadConfig({ ...base, PUBLIC_URL: 'http://localhost:8080', PASSKEY_ORIGINS: 'http://localhost:8080' })).not.toThrow();
  });
});
