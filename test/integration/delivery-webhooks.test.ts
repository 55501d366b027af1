import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import twilio from 'twilio';
import { notFoundHandler } from '../../api/middleware/error-handler.js';
import { errorHandler } from '../../api/errors/error-pipeline.js';
import { webhookRoutes } from '../../api/routes/webhooks.routes.js';
import type { DeliveryReceipt } from '../../core/providers/delivery-receipt.types.js';
import { startTestService, type TestService } from '../support/test-service.js';

const D1_TIMESTAMP = expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);
const PUBLIC_URL = 'https://id.example.com';
const TWILIO_TOKEN = 'twilio-webhook-test-token';

describe('delivery receipt webhooks', () => {
  let service: TestService;
  let server: Server;
  let url: string;
  let privateKey: KeyObject;
  const receipts: DeliveryReceipt[] = [];

  beforeAll(async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    privateKey = pair.privateKey;
    service = await startTestService('webhooks', {
      PUBLIC_URL,
      TWILIO_ACCOUNT_SID: `AC${'ab'.repeat(16)}`,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+15005550006',
      SENDGRID_WEBHOOK_PUBLIC_KEY: pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    });
    // The real routes with a recording callback in place of the delivery-row update.
    const app = express()
      .use(
        webhookRoutes(service.ctx, service.services.repositories.webhookEvents, async (receipt) => {
          receipts.push(receipt);
        }),
      )
      .use(notFoundHandler())
      .use(errorHandler(service.ctx.logger));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await service.close();
  });
  beforeEach(() => {
    receipts.length = 0;
  });

  const forbiddenBody = (path: string) => ({
    timestamp: D1_TIMESTAMP,
    status: 403,
    error: 'Forbidden',
    message: 'Invalid webhook signature',
    path,
  });

  function postTwilio(params: Record<string, string>, signature: string, query = '') {
    return fetch(`${url}/webhooks/twilio/status${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      body: new URLSearchParams(params).toString(),
    });
  }
  const twilioSignature = (params: Record<string, string>, query = '') =>
    twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_URL}/webhooks/twilio/status${query}`, params);

  test('when Twilio reports delivered with a valid signature, then a DELIVERED receipt is recorded', async () => {
    const params = { MessageSid: 'SM00000000000000000000000000000001', MessageStatus: 'delivered', AccountSid: `AC${'ab'.repeat(16)}` };
    const res = await postTwilio(params, twilioSignature(params, '?deliveryId=d1'), '?deliveryId=d1');
    expect(res.status).toBe(204);
    expect(receipts).toEqual([{ provider: 'twilio', providerMessageId: 'SM00000000000000000000000000000001', state: 'DELIVERED' }]);
  });

  test('when Twilio reports undelivered, then a FAILED receipt carries the error code; interim states record nothing', async () => {
    const failed = { MessageSid: 'SM2', MessageStatus: 'undelivered', ErrorCode: '30003' };
    expect((await postTwilio(failed, twilioSignature(failed))).status).toBe(204);
    const sent = { MessageSid: 'SM2', MessageStatus: 'sent' };
    expect((await postTwilio(sent, twilioSignature(sent))).status).toBe(204);
    expect(receipts).toEqual([{ provider: 'twilio', providerMessageId: 'SM2', state: 'FAILED', error: 'undelivered (Twilio 30003)' }]);
  });

  test('when the Twilio signature is forged, missing or for other fields, then 403 and nothing is recorded', async () => {
    const params = { MessageSid: 'SM3', MessageStatus: 'delivered' };
    const forged = twilio.getExpectedTwilioSignature('another-token', `${PUBLIC_URL}/webhooks/twilio/status`, params);
    const tampered = twilioSignature({ ...params, MessageStatus: 'failed' });
    for (const signature of [forged, '', tampered]) {
      const res = await postTwilio(params, signature);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(forbiddenBody('/webhooks/twilio/status'));
    }
    expect(receipts).toEqual([]);
  });

  function signSendgrid(payload: string, timestamp: string): string {
    return sign('sha256', Buffer.from(timestamp + payload), privateKey).toString('base64');
  }
  function postSendgrid(payload: string, signature: string, timestamp: string) {
    return fetch(`${url}/webhooks/sendgrid/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signature,
        'x-twilio-email-event-webhook-timestamp': timestamp,
      },
      body: payload,
    });
  }
  const now = () => String(Math.floor(Date.now() / 1000));
  const events = (id: string) =>
    JSON.stringify([
      {
        email: 'ada@example.com',
        event: 'processed',
        sg_event_id: `${id}-p`,
        sg_message_id: 'msgA.filter0001.1.2',
        svc_ref: 'ref-a',
        timestamp: 1,
      },
      {
        email: 'ada@example.com',
        event: 'delivered',
        sg_event_id: `${id}-d`,
        sg_message_id: 'msgA.filter0001.1.2',
        svc_ref: 'ref-a',
        timestamp: 2,
      },
      {
        email: 'bob@example.com',
        event: 'bounce',
        reason: '550 5.1.1 unknown user',
        sg_event_id: `${id}-b`,
        sg_message_id: 'msgB.filter0001.3.4',
        timestamp: 3,
      },
    ]);

  test('when SendGrid posts signed events, then delivered and bounce become receipts', async () => {
    const payload = events('e1');
    const ts = now();
    const res = await postSendgrid(payload, signSendgrid(payload, ts), ts);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ processed: 3, duplicates: 0 });
    expect(receipts).toEqual([
      { provider: 'sendgrid', providerMessageId: 'msgA', reference: 'ref-a', state: 'DELIVERED' },
      { provider: 'sendgrid', providerMessageId: 'msgB', state: 'FAILED', error: 'bounce: 550 5.1.1 unknown user' },
    ]);
  });

  test('when the same events arrive again (SendGrid retry), then each sg_event_id is handled once', async () => {
    const payload = events('e2');
    const ts = now();
    await postSendgrid(payload, signSendgrid(payload, ts), ts);
    const again = await postSendgrid(payload, signSendgrid(payload, ts), ts);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ processed: 0, duplicates: 3 });
    expect(receipts).toHaveLength(2);
  });

  test('when the SendGrid signature is forged or the body altered, then 403', async () => {
    const payload = events('e3');
    const ts = now();
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const forged = sign('sha256', Buffer.from(ts + payload), other).toString('base64');
    for (const [body, signature] of [
      [payload, forged],
      [payload.replace('bounce', 'delivered'), signSendgrid(payload, ts)],
      [payload, 'not-a-signature'],
      [payload, ''],
    ] as const) {
      const res = await postSendgrid(body, signature, ts);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(forbiddenBody('/webhooks/sendgrid/events'));
    }
    expect(receipts).toEqual([]);
  });

  test('when a validly signed request is replayed outside the 5-minute window, then 403', async () => {
    const payload = events('e4');
    // A second past the window behind, and well past it ahead: the clock moves on while the request
    // travels, which brings a timestamp ahead closer to the window (floor(now) + 301 was inside it
    // by the time a loaded machine checked it, a fraction of a second later).
    const behind = Math.floor(Date.now() / 1000) - 301;
    const ahead = Math.ceil(Date.now() / 1000) + 330;
    for (const ts of [String(behind), String(ahead)]) {
      const res = await postSendgrid(payload, signSendgrid(payload, ts), ts);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(forbiddenBody('/webhooks/sendgrid/events'));
    }
    expect(receipts).toEqual([]);
  });

  test('when a signed body is not a JSON array of events, then 400', async () => {
    const payload = '{"event":"delivered"}';
    const ts = now();
    const res = await postSendgrid(payload, signSendgrid(payload, ts), ts);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      timestamp: D1_TIMESTAMP,
      status: 400,
      error: 'Bad Request',
      message: 'Malformed request body',
      path: '/webhooks/sendgrid/events',
    });
  });
});
