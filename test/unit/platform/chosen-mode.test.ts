import { loadConfig } from '../../../core/platform/config/config.js';
import { configProblems } from '../../support/config-problems.js';
import { chosenModeNote } from '../../../core/platform/config/chosen-mode.js';

const stores = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };
const secrets = {
  ADMIN_TOKEN: 'a'.repeat(32),
  OTP_HMAC_KEY: 'b'.repeat(64),
  OTP_ENCRYPTION_KEY: 'c'.repeat(64),
};

describe('the mode a process runs in when NODE_ENV is not set', () => {
  const reachedFromOtherMachines = [
    'https://id.example.com',
    'http://10.0.0.5:8080',
    'http://[2001:db8::1]',
    'http://localhost.example.com',
    'http://128.0.0.1',
  ];

  test('when PUBLIC_URL is reached from other machines and the secrets are missing, then the process does not start and says production came from PUBLIC_URL', () => {
    for (const publicUrl of reachedFromOtherMachines) {
      const problems = configProblems({ ...stores, PUBLIC_URL: publicUrl });
      expect(problems).toEqual(
        expect.arrayContaining([
          'ADMIN_TOKEN: is required in production',
          'OTP_HMAC_KEY: is required in production',
          expect.stringMatching(/^NODE_ENV: is not set, so production because PUBLIC_URL is reached from other machines/),
        ]),
      );
    }
  });

  test('when PUBLIC_URL is reached from other machines and the secrets are set, then it runs in production, without the demo app or loopback targets, and says why at start', () => {
    const env = { ...stores, ...secrets, PUBLIC_URL: 'https://id.example.com' };
    const config = loadConfig(env);
    expect(config.nodeEnv).toBe('production');
    expect(config.demoApprover).toBe(false);
    expect(chosenModeNote(env, config)).toMatch(
      /^NODE_ENV is not set, so this process runs in production mode because PUBLIC_URL \(https:\/\/id\.example\.com\)/,
    );
  });

  test('when PUBLIC_URL is unset or this machine in any spelling, then it runs in development without a note', () => {
    for (const publicUrl of [
      undefined,
      '',
      'http://localhost:8080',
      'http://127.0.0.2:3000',
      'http://[::1]:8080',
      'http://app.localhost',
      'http://[::ffff:127.0.0.1]:8080',
    ]) {
      const env = { ...stores, ...(publicUrl === undefined ? {} : { PUBLIC_URL: publicUrl }) };
      const config = loadConfig(env);
      expect(config.nodeEnv).toBe('development');
      expect(chosenModeNote(env, config)).toBeUndefined();
    }
  });

  test('when NODE_ENV is set, then it is the mode whatever PUBLIC_URL is, and nothing is noted', () => {
    const development = { ...stores, NODE_ENV: 'development', PUBLIC_URL: 'https://id.example.com' };
    expect(loadConfig(development).nodeEnv).toBe('development');
    expect(chosenModeNote(development, loadConfig(development))).toBeUndefined();
    const production = { ...stores, ...secrets, NODE_ENV: 'production', PUBLIC_URL: 'http://localhost:8080' };
    expect(loadConfig(production).nodeEnv).toBe('production');
    expect(chosenModeNote(production, loadConfig(production))).toBeUndefined();
  });
});
