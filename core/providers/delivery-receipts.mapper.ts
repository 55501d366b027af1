import type { DeliveryReceipt } from './delivery-receipt.types.js';
import { SENDGRID_REFERENCE_ARG } from './sendgrid-reference.js';

/**
 * Twilio status callback → receipt. Intermediate states (queued, sending, sent) are not final
 * and give no receipt.
 */
export function receiptFromTwilioStatus(params: Record<string, unknown>, secondaryAccountSid?: string): DeliveryReceipt | undefined {
  const sid = params.MessageSid;
  const status = params.MessageStatus;
  if (typeof sid !== 'string' || typeof status !== 'string') return undefined;
  const provider = secondaryAccountSid !== undefined && params.AccountSid === secondaryAccountSid ? 'twilio-secondary' : 'twilio';
  if (status === 'delivered') return { provider, providerMessageId: sid, state: 'DELIVERED' };
  if (status === 'failed' || status === 'undelivered') {
    const code = typeof params.ErrorCode === 'string' && params.ErrorCode !== '' ? ` (Twilio ${params.ErrorCode})` : '';
    return { provider, providerMessageId: sid, state: 'FAILED', error: `${status}${code}` };
  }
  return undefined;
}

export interface SendgridEvent {
  event?: unknown;
  sg_event_id?: unknown;
  sg_message_id?: unknown;
  reason?: unknown;
  [customArg: string]: unknown;
}

/** SendGrid event → receipt: `delivered`, or `bounce`/`dropped` as failures; others give none. */
export function receiptFromSendgridEvent(event: SendgridEvent): DeliveryReceipt | undefined {
  if (typeof event.sg_message_id !== 'string') return undefined;
  const providerMessageId = event.sg_message_id.split('.')[0] ?? event.sg_message_id;
  const refValue = event[SENDGRID_REFERENCE_ARG];
  const reference = typeof refValue === 'string' ? { reference: refValue } : {};
  if (event.event === 'delivered') return { provider: 'sendgrid', providerMessageId, ...reference, state: 'DELIVERED' };
  if (event.event === 'bounce' || event.event === 'dropped') {
    const reason = typeof event.reason === 'string' ? `: ${event.reason}` : '';
    return { provider: 'sendgrid', providerMessageId, ...reference, state: 'FAILED', error: `${event.event}${reason}` };
  }
  return undefined;
}
