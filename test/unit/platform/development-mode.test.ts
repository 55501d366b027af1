import { developmentModeWarning } from '../../../core/platform/config/development-mode.js';

describe('the warning of a process left in development mode', () => {
  const development = (publicUrl: string) => ({ nodeEnv: 'development' as const, publicUrl });

  test('when NODE_ENV is unset and PUBLIC_URL is reached from other machines, then the process warns, naming the fix', () => {
    for (const publicUrl of [
      'https://id.example.com',
      'http://10.0.0.5:8080',
      'http://[2001:db8::1]',
      'http://localhost.example.com',
      'http://128.0.0.1',
    ]) {
      expect(developmentModeWarning({}, development(publicUrl))).toMatch(/^NODE_ENV is not set.*Set NODE_ENV=production on servers\.$/);
    }
  });

  test('when PUBLIC_URL is this machine, or NODE_ENV was chosen, then no warning', () => {
    for (const publicUrl of [
      'http://localhost:8080',
      'http://127.0.0.1:3000',
      'http://[::1]:8080',
      'http://app.localhost',
      'http://127.0.0.2:3000',
    ]) {
      expect(developmentModeWarning({}, development(publicUrl))).toBeUndefined();
    }
    // IPv4-mapped loopback is this machine too (it warned while the check was a pattern of its own).
    expect(developmentModeWarning({}, development('http://[::ffff:127.0.0.1]:8080'))).toBeUndefined();
    expect(developmentModeWarning({ NODE_ENV: 'development' }, development('https://id.example.com'))).toBeUndefined();
    expect(
      developmentModeWarning({ NODE_ENV: 'production' }, { nodeEnv: 'production', publicUrl: 'https://id.example.com' }),
    ).toBeUndefined();
  });
});
