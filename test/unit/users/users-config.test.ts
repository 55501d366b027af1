import { ConfigError, loadConfig } from '../../../core/platform/config/config.js';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('enrollment and activation configuration', () => {
  test('when nothing is set, then codes live 7 days, the activation throttle has its documented defaults and no analyzer is used', () => {
    const config = loadConfig(base);
    expect(config.activation).toEqual({
      codeTtlSeconds: 604800,
      perIp: { points: 60, durationSeconds: 60 },
      maxFailures: 100,
      freeFailuresPerAddress: 5,
      freeFailuresPerUser: 20,
      maxDelayPerAddressSeconds: 900,
      maxDelayPerUserSeconds: 3600,
      failureFloorMs: 250,
    });
    expect(config.faceAnalyzer).toBeUndefined();
  });

  test('when the analyzer and limits are set, then they are read as numbers and URL', () => {
    const config = loadConfig({
      ...base,
      FACE_ANALYZER_URL: 'http://analyzer:9000/analyze',
      FACE_ANALYZER_TIMEOUT_MS: '1500',
      ACTIVATION_CODE_TTL_SECONDS: '3600',
      RATE_LIMIT_ACTIVATE_PER_IP: '5',
    });
    expect(config.faceAnalyzer).toEqual({ url: 'http://analyzer:9000/analyze', timeoutMs: 1500 });
    expect(config.activation.codeTtlSeconds).toBe(3600);
    expect(config.activation.perIp.points).toBe(5);
  });

  test('when the values are out of range, then each key is named', () => {
    let caught: unknown;
    try {
      loadConfig({ ...base, FACE_ANALYZER_URL: 'ftp://x', ACTIVATION_CODE_TTL_SECONDS: '5', FACE_ANALYZER_TIMEOUT_MS: '0' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.split(':')[0])).toEqual([
      'ACTIVATION_CODE_TTL_SECONDS',
      'FACE_ANALYZER_TIMEOUT_MS',
      'FACE_ANALYZER_URL',
    ]);
  });

  test('when more than 100 consecutive failures would be allowed, or the free failures reach the cap, then the start is refused', () => {
    expect(() => loadConfig({ ...base, ACTIVATION_MAX_FAILURES: '101' })).toThrow('ACTIVATION_MAX_FAILURES: must be <= 100');
    expect(() => loadConfig({ ...base, ACTIVATION_MAX_FAILURES: '10', ACTIVATION_FREE_FAILURES_PER_USER: '10' })).toThrow(
      'ACTIVATION_FREE_FAILURES_PER_USER: must be below ACTIVATION_MAX_FAILURES',
    );
  });
});
