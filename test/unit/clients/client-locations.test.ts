import { isNativeApp, isPlainHttpOffLoopback, redirectUriKind } from '../../../core/clients/redirect-uris.js';
import { normalizeWebOrigin, webOriginsOf } from '../../../core/clients/web-origins.js';

describe('where clients live: native apps and web origins', () => {
  test.each([
    ['a private-use scheme', true, ['com.example.app:/cb'], true],
    ['a loopback IP redirect URI', true, ['http://127.0.0.1/cb'], true],
    ['a private-use scheme and claimed https', true, ['com.example.app:/cb', 'https://app.example/cb'], true],
    ['only https', true, ['https://app.example/cb'], false],
    ['a loopback URI beside plain http elsewhere', true, ['http://127.0.0.1/cb', 'http://dev.example/cb'], false],
    ['a loopback URI beside https on loopback', true, ['http://127.0.0.1/cb', 'https://localhost/cb'], false],
    ['a confidential client with a loopback URI', false, ['http://127.0.0.1/cb'], false],
  ])('when a client has %s, then native is %s', (_label, isPublic, redirectUris, native) => {
    expect(isNativeApp({ isPublic: isPublic as boolean, redirectUris: redirectUris as string[] })).toBe(native);
  });

  test('when a public client has https and http redirect URIs and listed origins, then only the https origins and the list count', () => {
    expect(
      webOriginsOf({
        isPublic: true,
        redirectUris: ['https://spa.example/cb', 'https://spa.example:8443/other', 'http://127.0.0.1/cb', 'com.example.app:/cb'],
        webOrigins: ['https://listed.example'],
      }),
    ).toEqual(['https://spa.example', 'https://spa.example:8443', 'https://listed.example']);
    expect(webOriginsOf({ isPublic: false, redirectUris: ['https://bank.example/cb'], webOrigins: [] })).toEqual([]);
  });

  test('when a web origin is written with a trailing slash, upper case or its default port, then it is stored as browsers send it', () => {
    expect(normalizeWebOrigin('https://App.Example/')).toBe('https://app.example');
    expect(normalizeWebOrigin('https://app.example:443')).toBe('https://app.example');
    expect(normalizeWebOrigin('http://[::1]:5173')).toBe('http://[::1]:5173');
  });

  test('when a redirect URI or origin is plain http on 127.0.0.1, [::1] or localhost, then it counts as loopback; on other spellings of this machine, as plain http elsewhere', () => {
    for (const host of ['127.0.0.1', '[::1]', 'localhost']) {
      expect(redirectUriKind(`http://${host}:5000/cb`)).toBe('http-loopback');
      expect(isPlainHttpOffLoopback(`http://${host}/cb`)).toBe(false);
      expect(normalizeWebOrigin(`http://${host}:5173`)).toBe(`http://${host}:5173`);
    }
    for (const host of ['127.0.0.2', 'app.localhost', '[::ffff:127.0.0.1]']) {
      expect(redirectUriKind(`http://${host}:5000/cb`)).toBe('http');
      expect(isPlainHttpOffLoopback(`http://${host}/cb`)).toBe(true);
      expect(() => normalizeWebOrigin(`http://${host}:5173`)).toThrow('uses http off loopback; pages of other origins must be https');
      expect(isNativeApp({ isPublic: true, redirectUris: [`http://${host}/cb`] })).toBe(false);
    }
  });
});
