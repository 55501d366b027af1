import { isCanonicalLoopbackHost, isLoopbackHost } from '../../../core/platform/loopback-host.js';

/** Host names as the callers get them: from a parsed URL. */
const hostOf = (url: string) => new URL(url).hostname;

describe('which host names are this machine', () => {
  test.each([
    ['IPv4 127.0.0.1', 'http://127.0.0.1:3000'],
    ['the rest of 127/8', 'http://127.0.0.2'],
    ['the top of 127/8', 'http://127.255.255.254'],
    ['127/8 in a short spelling', 'http://127.1'],
    ['IPv6 ::1', 'http://[::1]:8080'],
    ['::1 written out', 'http://[0:0:0:0:0:0:0:1]'],
    ['IPv4-mapped 127.0.0.1', 'http://[::ffff:127.0.0.1]'],
    ['IPv4-mapped 127.9.9.9', 'http://[::ffff:7f09:909]'],
    ['localhost', 'http://localhost:8080'],
    ['localhost in capitals', 'http://LOCALHOST'],
    ['a name under localhost', 'http://app.localhost'],
  ])('when the host is %s, then it is loopback', (_label, url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(true);
  });

  test.each([
    ['IPv4 next to 127/8', 'http://128.0.0.1'],
    ['a private IPv4 address', 'http://10.0.0.5'],
    ['IPv6 next to ::1', 'http://[::2]'],
    ['IPv4-mapped private address', 'http://[::ffff:10.0.0.1]'],
    ['a public IPv6 address', 'http://[2001:db8::1]'],
    ['a public name', 'https://id.example.com'],
    ['a name that starts with localhost', 'http://localhost.example.com'],
    ['a name that ends in localhost without a dot', 'http://mylocalhost'],
  ])('when the host is %s, then it is not loopback', (_label, url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(false);
  });

  test('when the host is 127.0.0.1, [::1] or localhost, then it is a canonical loopback name; other spellings of this machine are not', () => {
    for (const url of ['http://127.0.0.1:3000', 'http://[::1]:8080', 'http://localhost', 'http://127.0.0.01']) {
      expect(isCanonicalLoopbackHost(hostOf(url))).toBe(true);
    }
    for (const url of [
      'http://127.0.0.2',
      'http://app.localhost',
      'http://[::ffff:127.0.0.1]',
      'http://10.0.0.5',
      'https://id.example.com',
    ]) {
      expect(isCanonicalLoopbackHost(hostOf(url))).toBe(false);
    }
  });
});
