import { ConfigError, loadConfig } from '../../../core/platform/config/config.js';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };
const production = {
  ...base,
  NODE_ENV: 'production',
  ADMIN_TOKEN: 'a'.repeat(32),
  OTP_HMAC_KEY: 'k'.repeat(43),
  OTP_ENCRYPTION_KEY: 'e'.repeat(64),
};

describe('configuration of callback addresses', () => {
  test('when nothing is set, then loopback callbacks are allowed in development only and no private network is', () => {
    expect(loadConfig(base).notifications.callbackAddresses).toEqual({ allowLoopback: true, allowedNetworks: [] });
    expect(loadConfig({ ...base, NODE_ENV: 'test' }).notifications.callbackAddresses.allowLoopback).toBe(false);
    expect(loadConfig(production).notifications.callbackAddresses.allowLoopback).toBe(false);
  });

  test('when an operator opts in or out and lists private networks, then that is the policy', () => {
    const config = loadConfig({
      ...production,
      NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on',
      NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: '10.20.0.0/16, fd00:1::/64',
    });
    expect(config.notifications.callbackAddresses).toEqual({ allowLoopback: true, allowedNetworks: ['10.20.0.0/16', 'fd00:1::/64'] });
    expect(loadConfig({ ...base, NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'off' }).notifications.callbackAddresses.allowLoopback).toBe(false);
  });

  test('when a listed network is not a CIDR range, then the process refuses to start naming it', () => {
    expect(() => loadConfig({ ...base, NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: '10.0.0.0/8, 192.168.1.1, intranet' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: '10.0.0.0/8, 192.168.1.1, intranet' })).toThrow(
      'NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: must be a comma-separated list of CIDR ranges; not valid: 192.168.1.1, intranet',
    );
    expect(() => loadConfig({ ...base, NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'yes' })).toThrow('NOTIFICATION_CALLBACK_ALLOW_LOOPBACK');
  });
});
