import type { Connection } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { createOutboxRepository } from '../../core/providers/outbox.repository.js';
import { PermanentProviderError, TransientProviderError } from '../../core/providers/provider-errors.js';
import { createProviders } from '../../core/providers/providers.factory.js';
import { SendgridEmailProvider } from '../../core/providers/sendgrid-email.provider.js';
import { TwilioSmsProvider } from '../../core/providers/twilio-sms.provider.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { memoryLogger, uniqueName } from '../support/test-service.js';

const twilioConfig = (apiBaseUrl: string) => ({
  accountSid: `AC${'0123456789abcdef'.repeat(2)}`,
  authToken: 'twilio-test-auth-token',
  from: '+15005550006',
  messagingServiceSid: undefined,
  apiBaseUrl,
});
const sendgridConfig = (base: string) => ({ apiKey: 'SG.test-key.0123456789', apiBaseUrl: `${base}/` });

function mockUrl(name: 'TEST_TWILIO_MOCK_URL' | 'TEST_SENDGRID_MOCK_URL'): string {
  const url = process.env[name];
  if (!url) throw new Error(`${name} missing: run through npm test (global set-up starts Prism)`);
  return url;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('Twilio SMS provider (real SDK)', () => {
  let stub: ProviderStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  test('when the Prism mock of the Twilio API accepts the message, then the message SID is returned', async () => {
    const provider = new TwilioSmsProvider(twilioConfig(mockUrl('TEST_TWILIO_MOCK_URL')));
    const sent = await provider.send({
      to: '+14155550100',
      text: 'Your code is 123456',
      statusCallbackUrl: 'https://id.example.com/webhooks/twilio/status',
    });
    expect(sent).toEqual({ providerMessageId: expect.any(String) });
    expect(sent.providerMessageId.length).toBeGreaterThan(0);
  });

  test('when Twilio answers 500 with Retry-After, then TransientProviderError carries retryAfterMs', async () => {
    stub = await startProviderStub([
      { status: 500, headers: { 'Retry-After': '7' }, body: { code: 20500, message: 'Internal Server Error', status: 500 } },
    ]);
    const err = await caught(new TwilioSmsProvider(twilioConfig(stub.url)).send({ to: '+14155550100', text: 'x' }));
    expect(err).toBeInstanceOf(TransientProviderError);
    expect(err).toMatchObject({ status: 500, retryAfterMs: 7000, message: 'Twilio answered 500: Internal Server Error (Twilio 20500)' });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${twilioConfig('').accountSid}/Messages.json` });
    expect(Object.fromEntries(new URLSearchParams(stub.requests[0]?.body))).toEqual({
      To: '+14155550100',
      Body: 'x',
      From: '+15005550006',
    });
  });

  test('when Twilio answers 429 with an HTTP-date Retry-After, then the wait is parsed from the date', async () => {
    const when = new Date(Date.now() + 60000).toUTCString();
    stub = await startProviderStub([
      { status: 429, headers: { 'Retry-After': when }, body: { code: 20429, message: 'Too Many Requests', status: 429 } },
    ]);
    const err = await caught(new TwilioSmsProvider(twilioConfig(stub.url)).send({ to: '+14155550100', text: 'x' }));
    expect(err).toBeInstanceOf(TransientProviderError);
    expect((err as TransientProviderError).status).toBe(429);
    expect((err as TransientProviderError).retryAfterMs).toBeGreaterThan(55000);
    expect((err as TransientProviderError).retryAfterMs).toBeLessThanOrEqual(60000);
  });

  test('when Twilio answers 400 with code 21211, then PermanentProviderError with the reason and code', async () => {
    stub = await startProviderStub([
      {
        status: 400,
        body: {
          code: 21211,
          message: "The 'To' number +1415 is not a valid phone number.",
          more_info: 'https://www.twilio.com/docs/errors/21211',
          status: 400,
        },
      },
    ]);
    const err = await caught(new TwilioSmsProvider(twilioConfig(stub.url)).send({ to: '+1415', text: 'x' }));
    expect(err).toBeInstanceOf(PermanentProviderError);
    expect(err).toMatchObject({
      status: 400,
      providerCode: '21211',
      reason: "The 'To' number +1415 is not a valid phone number. (Twilio 21211)",
    });
  });

  test('when Twilio answers 500 then 201, then the first send is transient and the retry succeeds', async () => {
    stub = await startProviderStub([
      { status: 500, body: { code: 20500, message: 'Internal Server Error', status: 500 } },
      { status: 201, body: { sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued' } },
    ]);
    const provider = new TwilioSmsProvider(twilioConfig(stub.url));
    const first = await caught(provider.send({ to: '+14155550100', text: 'x' }));
    expect(first).toBeInstanceOf(TransientProviderError);
    expect((first as TransientProviderError).retryAfterMs).toBeUndefined();
    await expect(provider.send({ to: '+14155550100', text: 'x' })).resolves.toEqual({
      providerMessageId: 'SM0123456789abcdef0123456789abcdef',
    });
  });

  test('when Twilio does not answer in time, then TransientProviderError (timeout)', async () => {
    stub = await startProviderStub([{ status: 201, body: { sid: 'SMlate' }, delayMs: 2000 }]);
    const err = await caught(new TwilioSmsProvider(twilioConfig(stub.url), { timeoutMs: 200 }).send({ to: '+14155550100', text: 'x' }));
    expect(err).toBeInstanceOf(TransientProviderError);
    expect((err as Error).message).toMatch(/^Twilio unreachable: /);
  });
});

describe('SendGrid e-mail provider (real SDK)', () => {
  let stub: ProviderStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  test('when the Prism mock of the Mail API accepts the e-mail, then a generated reference stands in for X-Message-Id', async () => {
    const provider = new SendgridEmailProvider(sendgridConfig(mockUrl('TEST_SENDGRID_MOCK_URL')), 'no-reply@example.com');
    const sent = await provider.send({
      to: 'ada@example.com',
      subject: 'Code',
      text: 'Your code is 1',
      html: '<p>1</p>',
      customArgs: { deliveryId: 'd-1' },
      otpUuid: 'u-1',
    });
    expect(sent).toEqual({ providerMessageId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  test('when SendGrid answers 202 with X-Message-Id, then that id is returned and the request carries personalization custom args', async () => {
    stub = await startProviderStub([{ status: 202, headers: { 'X-Message-Id': 'abcDEF123' } }]);
    const provider = new SendgridEmailProvider(sendgridConfig(stub.url), 'no-reply@example.com');
    await expect(provider.send({ to: 'ada@example.com', subject: 'S', text: 'T', otpUuid: 'u-1' })).resolves.toEqual({
      providerMessageId: 'abcDEF123',
    });
    const body = JSON.parse(stub.requests[0]?.body ?? '{}') as Record<string, unknown>;
    expect(stub.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v3/mail/send',
      headers: expect.objectContaining({ authorization: 'Bearer SG.test-key.0123456789' }),
    });
    expect(body).toEqual({
      from: { email: 'no-reply@example.com' },
      subject: 'S',
      personalizations: [
        { to: [{ email: 'ada@example.com' }], custom_args: { otpUuid: 'u-1', svc_ref: expect.stringMatching(/^[0-9a-f-]{36}$/) } },
      ],
      content: [{ type: 'text/plain', value: 'T' }],
    });
  });

  test('when SendGrid answers 500 then 429 with Retry-After, then both are transient and the delay is parsed', async () => {
    stub = await startProviderStub([
      { status: 500, body: { errors: [{ message: 'internal error' }] } },
      { status: 429, headers: { 'Retry-After': '30' }, body: { errors: [{ message: 'too many requests' }] } },
    ]);
    const provider = new SendgridEmailProvider(sendgridConfig(stub.url), 'no-reply@example.com');
    const first = await caught(provider.send({ to: 'ada@example.com', subject: 'S', text: 'T' }));
    expect(first).toBeInstanceOf(TransientProviderError);
    expect(first).toMatchObject({ status: 500, retryAfterMs: undefined, message: 'SendGrid answered 500: internal error' });
    const second = await caught(provider.send({ to: 'ada@example.com', subject: 'S', text: 'T' }));
    expect(second).toMatchObject({ status: 429, retryAfterMs: 30000 });
    expect(second).toBeInstanceOf(TransientProviderError);
  });

  test('when SendGrid answers 400, then PermanentProviderError with the field and reason', async () => {
    stub = await startProviderStub([
      { status: 400, body: { errors: [{ message: 'Does not contain a valid address.', field: 'personalizations.0.to.0.email' }] } },
    ]);
    const err = await caught(
      new SendgridEmailProvider(sendgridConfig(stub.url), 'no-reply@example.com').send({ to: 'bad', subject: 'S', text: 'T' }),
    );
    expect(err).toBeInstanceOf(PermanentProviderError);
    expect(err).toMatchObject({ status: 400, reason: 'personalizations.0.to.0.email: Does not contain a valid address.' });
  });

  test('when SendGrid is unreachable, then TransientProviderError', async () => {
    stub = await startProviderStub([{ status: 202 }]);
    const url = stub.url;
    await stub.close();
    stub = undefined;
    const err = await caught(
      new SendgridEmailProvider(sendgridConfig(url), 'no-reply@example.com').send({ to: 'ada@example.com', subject: 'S', text: 'T' }),
    );
    expect(err).toBeInstanceOf(TransientProviderError);
    expect((err as Error).message).toBe('SendGrid unreachable: ECONNREFUSED');
  });
});

describe('createProviders and the outbox', () => {
  let mongo: Connection;
  beforeAll(async () => {
    mongo = await connectMongo(testMongoUri(uniqueName('providers')));
  });
  afterAll(async () => {
    await mongo.close();
  });

  test('when no credentials are configured, then both channels use the outbox and store what is sent', async () => {
    const { logger, lines } = memoryLogger();
    const providers = createProviders(
      { twilio: undefined, sendgrid: undefined, emailFrom: 'no-reply@example.com' },
      createOutboxRepository(mongo),
      logger,
    );
    expect([providers.sms.name, providers.email.name]).toEqual(['outbox', 'outbox']);
    const sms = await providers.sms.send({ to: '+14155550123', text: 'code 1', otpUuid: 'otp-1' });
    const email = await providers.email.send({ to: 'grace@example.com', subject: 'S', text: 'code 2', html: '<b>2</b>' });
    expect(sms.providerMessageId).toMatch(/^outbox-[0-9a-f]{24}$/);
    expect(email.providerMessageId).toMatch(/^outbox-[0-9a-f]{24}$/);
    const stored = await createOutboxRepository(mongo).listOutboxMessages({ limit: 10 });
    expect(stored.map(({ id: _id, createdAt: _c, ...m }) => m)).toEqual([
      { channel: 'EMAIL', to: 'grace@example.com', subject: 'S', text: 'code 2', html: '<b>2</b>' },
      { channel: 'SMS', to: '+14155550123', text: 'code 1', otpUuid: 'otp-1' },
    ]);
    const logged = JSON.stringify(lines());
    expect(logged).not.toContain('grace@example.com');
    expect(logged).not.toContain('+14155550123');
    expect(logged).not.toContain('code 1');
  });

  test('when credentials are configured per channel, then each channel picks its own provider', () => {
    const { logger } = memoryLogger();
    const both = createProviders(
      { twilio: twilioConfig('http://127.0.0.1:1'), sendgrid: sendgridConfig('http://127.0.0.1:1'), emailFrom: 'a@example.com' },
      createOutboxRepository(mongo),
      logger,
    );
    expect([both.sms.name, both.email.name]).toEqual(['twilio', 'sendgrid']);
    const emailOnly = createProviders(
      { twilio: undefined, sendgrid: sendgridConfig('http://127.0.0.1:1'), emailFrom: 'a@example.com' },
      createOutboxRepository(mongo),
      logger,
    );
    expect([emailOnly.sms.name, emailOnly.email.name]).toEqual(['outbox', 'sendgrid']);
  });
});
