import { createAdminFormTokens } from '../../../api/middleware/admin-form-token.js';

describe('admin form tokens', () => {
  let clock = 1_800_000_000_000;
  const now = () => clock;
  const tokens = createAdminFormTokens('admin-token-0123456789abcdef', 'delivery-replay', now);

  test('when a token this page issued comes back within the hour, then it is accepted', () => {
    const token = tokens.issue();
    expect(token).toMatch(/^[0-9]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    clock += 59 * 60 * 1000;
    expect(tokens.isValid(token)).toBe(true);
    clock -= 59 * 60 * 1000;
  });

  test('when a token is older than an hour, altered, from another purpose or another admin token, then it is refused', () => {
    const token = tokens.issue();
    const [issued, nonce, mac] = token.split('.') as [string, string, string];
    expect(tokens.isValid(`${Number(issued) + 1}.${nonce}.${mac}`)).toBe(false);
    expect(tokens.isValid(`${issued}.${nonce.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}.${mac}`)).toBe(false);
    expect(createAdminFormTokens('admin-token-0123456789abcdef', 'other-page', now).isValid(token)).toBe(false);
    expect(createAdminFormTokens('another-admin-token-0123456789', 'delivery-replay', now).isValid(token)).toBe(false);
    for (const junk of [undefined, 42, '', 'a.b.c', `${token}x`, ['x']]) expect(tokens.isValid(junk)).toBe(false);
    clock += 60 * 60 * 1000 + 1;
    expect(tokens.isValid(token)).toBe(false);
  });
});
