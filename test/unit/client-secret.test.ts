import { generateClientSecret, hashClientSecret, verifyClientSecret } from '../../core/clients/client-secret.js';

describe('client secrets', () => {
  test('when a secret is hashed, then only the same secret verifies against it', () => {
    const secret = generateClientSecret();
    const stored = hashClientSecret(secret);
    expect(stored).not.toContain(secret);
    expect(verifyClientSecret(stored, secret)).toBe(true);
    expect(verifyClientSecret(stored, `${secret}x`)).toBe(false);
    expect(verifyClientSecret(stored, '')).toBe(false);
  });

  test('when a stored form is checked again, then each answer still depends on the secret presented', () => {
    const secret = generateClientSecret();
    const stored = hashClientSecret(secret);
    const answers = [secret, 'wrong', secret, `${secret} `, secret].map((presented) => verifyClientSecret(stored, presented));
    expect(answers).toEqual([true, false, true, false, true]);
    expect(verifyClientSecret('plain-secret', 'plain-secret')).toBe(false);
    expect(verifyClientSecret('plain-secret', 'plain-secret')).toBe(false);
  });

  test('when a secret matched one stored form, then it is remembered for that form only', () => {
    const first = generateClientSecret();
    const second = generateClientSecret();
    const firstStored = hashClientSecret(first);
    const secondStored = hashClientSecret(second);
    expect(verifyClientSecret(firstStored, first)).toBe(true);
    expect(verifyClientSecret(secondStored, first)).toBe(false);
    expect(verifyClientSecret(secondStored, second)).toBe(true);
    expect(verifyClientSecret(firstStored, second)).toBe(false);
    expect(verifyClientSecret(firstStored, first)).toBe(true);
    expect(verifyClientSecret(secondStored, second)).toBe(true);
    // The same secret under a new salt (a rotation back to it) is checked against that form.
    expect(verifyClientSecret(hashClientSecret(first), first)).toBe(true);
  });

  test('when the same secret is hashed twice, then the stored forms differ (salted)', () => {
    const secret = generateClientSecret();
    expect(hashClientSecret(secret)).not.toBe(hashClientSecret(secret));
  });

  test('when the stored form is not ours, then nothing verifies', () => {
    expect(verifyClientSecret('plain-secret', 'plain-secret')).toBe(false);
    expect(verifyClientSecret('hmac-sha256$$', '')).toBe(false);
  });

  test('when secrets are generated, then they are 256-bit base64url strings', () => {
    expect(generateClientSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
