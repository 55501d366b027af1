import express, { Router } from 'express';
import { BadRequestError } from '../../core/platform/errors/app-error.js';
import { HttpError } from '../errors/http-error.js';
import type { RecordDeliveryReceipt } from '../../core/providers/delivery-receipt.types.js';
import type { SendgridEvent } from '../../core/providers/delivery-receipts.mapper.js';
import { handleSendgridEvents, handleTwilioStatus } from '../../core/providers/delivery-receipts.service.js';
import type { WebhookEventsRepository } from '../../core/providers/webhook-events.repository.js';
import { verifySendgridSignature, verifyTwilioSignature } from '../../core/providers/webhook-signatures.js';
import { parsedWith } from '../middleware/body-parser-errors.js';
import type { ServiceContext } from '../service-context.js';

const forbidden = () => new HttpError('FORBIDDEN', 403, 'Invalid webhook signature');

function parseEvents(raw: Buffer): SendgridEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequestError('Malformed request body');
  }
  if (!Array.isArray(parsed) || !parsed.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e)))
    throw new BadRequestError('Malformed request body');
  return parsed as SendgridEvent[];
}

/** Delivery receipts from the providers; only signed, fresh calls reach `onReceipt`; `seen` keeps SendGrid's event ids. */
export function webhookRoutes(ctx: ServiceContext, seen: WebhookEventsRepository, onReceipt: RecordDeliveryReceipt): Router {
  const router = Router();

  router.post('/webhooks/twilio/status', parsedWith(express.urlencoded({ extended: false, limit: '100kb' })), async (req, res) => {
    const params = (req.body ?? {}) as Record<string, unknown>;
    // Each account signs its own callbacks with its own token; AccountSid says which one called.
    const secondary = ctx.config.twilioSecondary;
    const fromSecondary = secondary !== undefined && params.AccountSid === secondary.accountSid;
    const authToken = fromSecondary ? secondary.authToken : ctx.config.twilio?.authToken;
    // Twilio signs the URL it was given, which is the public one (behind proxies), query included.
    const url = `${ctx.config.publicUrl}${req.originalUrl}`;
    if (!authToken || !verifyTwilioSignature(authToken, req.get('x-twilio-signature'), url, params)) throw forbidden();
    await handleTwilioStatus(params, onReceipt, secondary?.accountSid);
    res.status(204).end();
  });

  // The signature covers the exact bytes, so the body is kept raw and parsed only after checking.
  router.post('/webhooks/sendgrid/events', parsedWith(express.raw({ type: () => true, limit: '5mb' })), async (req, res) => {
    const publicKey = ctx.config.sendgridWebhookPublicKey;
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signed = {
      rawBody,
      signature: req.get('x-twilio-email-event-webhook-signature'),
      timestamp: req.get('x-twilio-email-event-webhook-timestamp'),
    };
    if (!publicKey || !verifySendgridSignature(publicKey, signed)) throw forbidden();
    const result = await handleSendgridEvents(seen, parseEvents(rawBody), onReceipt);
    res.status(200).json(result);
  });

  return router;
}
