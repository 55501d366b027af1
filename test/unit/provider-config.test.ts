import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig } from '../../core/platform/config/config.js';

const base = { NODE_ENV: 'test', MONGODB_URI: 'mongodb://127.0.0.1:1/x', REDIS_URL: 'redis://127.0.0.1:1' };
const SID = `AC${'0'.repeat(32)}`;

describe('provider configuration', () => {
  test('when no provider variables are set, then both providers are absent and EMAIL_FROM has its default', () => {
    const config = loadConfig(base);
    expect({ twilio: config.twilio, sendgrid: config.sendgrid, key: config.sendgridWebhookPublicKey, from: config.emailFrom }).toEqual({
      twilio: undefined,
      sendgrid: undefined,
      key: undefined,
      from: 'no-reply@example.com',
    });
  });

  test('when Twilio and SendGrid are configured, then typed sections carry them (base URLs normalised)', () => {
    const config = loadConfig({
      ...base,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'secret-token',
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE_URL: 'http://127.0.0.1:4010',
      SENDGRID_API_KEY: 'SG.key.value',
      SENDGRID_API_BASE_URL: 'http://127.0.0.1:4011',
      EMAIL_FROM: 'id@example.com',
    });
    expect(config.twilio).toEqual({
      accountSid: SID,
      authToken: 'secret-token',
      from: '+15005550006',
      messagingServiceSid: undefined,
      apiBaseUrl: 'http://127.0.0.1:4010',
    });
    expect(config.sendgrid).toEqual({ apiKey: 'SG.key.value', apiBaseUrl: 'http://127.0.0.1:4011/' });
    expect(config.emailFrom).toBe('id@example.com');
  });

  test('when SENDGRID_WEBHOOK_PUBLIC_KEY is not a P-256 public key, then the boot fails naming it; the key SendGrid shows is accepted', () => {
    const spki = (curve: string) =>
      generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const sendgridKey = spki('prime256v1');
    expect(loadConfig({ ...base, SENDGRID_WEBHOOK_PUBLIC_KEY: sendgridKey }).sendgridWebhookPublicKey).toBe(sendgridKey);
    const problem = new ConfigError([
      "SENDGRID_WEBHOOK_PUBLIC_KEY: must be the P-256 verification key of SendGrid's signed Event Webhook (base64, as SendGrid shows it)",
    ]);
    for (const wrong of ['A'.repeat(44), spki('secp384r1'), Buffer.from('not a key at all, only a sentence of text').toString('base64')]) {
      expect(() => loadConfig({ ...base, SENDGRID_WEBHOOK_PUBLIC_KEY: wrong })).toThrow(problem);
    }
  });

  test('when Twilio is half configured, then the boot fails naming what is missing', () => {
    expect(() => loadConfig({ ...base, TWILIO_ACCOUNT_SID: SID })).toThrow(
      new ConfigError(['TWILIO_AUTH_TOKEN: is required with TWILIO_ACCOUNT_SID']),
    );
    expect(() => loadConfig({ ...base, TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'secret-token' })).toThrow(
      new ConfigError(['TWILIO_FROM: TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID is required with Twilio credentials']),
    );
  });

  test('when a secondary Twilio account is set, then it needs its token, its sender and the primary account; the breaker has defaults', () => {
    const primary = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'secret-token', TWILIO_FROM: '+15005550006' };
    const second = `AC${'1'.repeat(32)}`;
    const config = loadConfig({
      ...base,
      ...primary,
      TWILIO_SECONDARY_ACCOUNT_SID: second,
      TWILIO_SECONDARY_AUTH_TOKEN: 'other-token',
      TWILIO_SECONDARY_MESSAGING_SERVICE_SID: `MG${'2'.repeat(32)}`,
    });
    expect(config.twilioSecondary).toEqual({
      accountSid: second,
      authToken: 'other-token',
      from: undefined,
      messagingServiceSid: `MG${'2'.repeat(32)}`,
      apiBaseUrl: undefined,
    });
    expect(config.providerBreaker).toEqual({ errorPercent: 50, windowMs: 60000, minRequests: 5, resetMs: 30000 });
    expect(() => loadConfig({ ...base, ...primary, TWILIO_SECONDARY_ACCOUNT_SID: second })).toThrow(
      new ConfigError(['TWILIO_SECONDARY_AUTH_TOKEN: is required with TWILIO_SECONDARY_ACCOUNT_SID']),
    );
    expect(() =>
      loadConfig({
        ...base,
        TWILIO_SECONDARY_ACCOUNT_SID: second,
        TWILIO_SECONDARY_AUTH_TOKEN: 'other-token',
        TWILIO_SECONDARY_FROM: '+1500',
      }),
    ).toThrow(new ConfigError(['TWILIO_SECONDARY_ACCOUNT_SID: a secondary Twilio account needs the primary one (TWILIO_ACCOUNT_SID)']));
  });
});
