import { EventWebhook } from '@sendgrid/eventwebhook';
// Only Twilio's webhook helper: the API checks signatures and never sends, and the whole SDK would
// add about 30 MB to its memory.
import { validateRequest } from 'twilio/lib/webhooks/webhooks.js';

/** Twilio signs the full public URL it called (with query string) plus the sorted form fields. */
export function verifyTwilioSignature(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: Record<string, unknown>,
): boolean {
  if (!signature) return false;
  return validateRequest(authToken, signature, url, params);
}

export const SENDGRID_SIGNATURE_WINDOW_MS = 5 * 60 * 1000;

export interface SendgridSignedRequest {
  rawBody: Buffer;
  signature: string | undefined;
  /** Unix seconds, as sent in X-Twilio-Email-Event-Webhook-Timestamp. */
  timestamp: string | undefined;
}

/**
 * ECDSA over `timestamp + raw body` with the account's public key. The timestamp is signed, so
 * refusing old ones stops a captured request from being replayed later.
 */
export function verifySendgridSignature(
  publicKeyBase64: string,
  request: SendgridSignedRequest,
  now = Date.now(),
  windowMs = SENDGRID_SIGNATURE_WINDOW_MS,
): boolean {
  const { signature, timestamp, rawBody } = request;
  if (!signature || !timestamp || !/^[0-9]{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp) * 1000) > windowMs) return false;
  try {
    const webhook = new EventWebhook();
    return webhook.verifySignature(webhook.convertPublicKeyToECDSA(publicKeyBase64), rawBody, signature, timestamp);
  } catch {
    // A malformed signature makes the ECDSA library throw; it is simply not valid.
    return false;
  }
}
