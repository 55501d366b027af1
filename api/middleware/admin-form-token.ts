import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a page's form token is accepted: a person reading a preview before confirming. */
const FORM_TOKEN_TTL_MS = 60 * 60 * 1000;

/**
 * CSRF tokens for the admin pages, which have no session to keep one in (HTTP Basic or Bearer):
 * `<issued ms>.<nonce>.<HMAC>` under a key derived from the admin token. Another site can make
 * the browser post to a page (with the admin's Basic credentials) but cannot read a page to
 * learn a token; one that is forged, altered or older than an hour is refused. Changing the
 * admin token voids every token.
 */
export function createAdminFormTokens(adminToken: string, purpose: string, now: () => number = Date.now) {
  const key = createHmac('sha256', adminToken).update(`admin-form-token:${purpose}`).digest();
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  return {
    issue(): string {
      const payload = `${now()}.${randomBytes(16).toString('base64url')}`;
      return `${payload}.${mac(payload)}`;
    },
    isValid(token: unknown): boolean {
      if (typeof token !== 'string' || token.length > 200) return false;
      const match = /^([0-9]{1,15})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match) return false;
      const age = now() - Number(match[1]);
      if (age < 0 || age > FORM_TOKEN_TTL_MS) return false;
      const expected = Buffer.from(mac(`${match[1]}.${match[2]}`));
      const given = Buffer.from(match[3] as string);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
