import type { Delivery } from '../../core/deliveries/delivery.types.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import type { DeliveryReceipt, RecordDeliveryReceipt } from '../../core/providers/delivery-receipt.types.js';
import type { EmailProvider, SentMessage, SmsProvider } from '../../core/providers/provider.types.js';
import { mobileNumberKey } from '../../core/users/mobile-number-key.js';

/**
 * Test mode (docs/operations.md, "Test mode"): a test client's messages go to the outbox, never to
 * a provider, and get a receipt at once through the same path as real receipts, so an OTP's state
 * moves exactly as it would in production.
 */
export interface TestModeSend {
  /** Where test messages are kept (the outbox provider, whatever the real providers are). */
  outbox: SmsProvider & EmailProvider;
  /** The webhook receipt handling (core/providers/delivery-receipts.service.ts). */
  onReceipt: RecordDeliveryReceipt;
}

/** The provider label of test traffic in metrics and on failed rows. */
export const TEST_PROVIDER = 'test';

/** Magic addresses: everything else is DELIVERED. */
const FAILED_PHONE = '+15005550001';
const UNDELIVERED_PHONE = '+15005550002';
const FAILED_EMAIL_LOCAL = 'failed';
const UNDELIVERED_EMAIL_LOCAL = 'undelivered';

/** The simulated final state of a message to `to`: FAILED (`failed` or `undelivered` as the reason) or DELIVERED. */
export function simulatedOutcome(to: string): Pick<DeliveryReceipt, 'state' | 'error'> {
  const local = to.includes('@') ? to.slice(0, to.lastIndexOf('@')).toLowerCase() : undefined;
  // A phone is known by its SMS address, however the '+' was typed.
  const phone = local === undefined ? mobileNumberKey(to) : undefined;
  if (phone === FAILED_PHONE || local === FAILED_EMAIL_LOCAL) return { state: 'FAILED', error: 'failed (test mode)' };
  if (phone === UNDELIVERED_PHONE || local === UNDELIVERED_EMAIL_LOCAL) return { state: 'FAILED', error: 'undelivered (test mode)' };
  return { state: 'DELIVERED' };
}

/**
 * Applies the simulated receipt of a test message once its send is recorded. A failure leaves the
 * row SENT (as a lost provider receipt would) rather than failing a job whose message was sent.
 */
export async function simulateReceipt(testMode: TestModeSend, delivery: Delivery, sent: SentMessage, logger: Logger): Promise<void> {
  try {
    await testMode.onReceipt({
      provider: TEST_PROVIDER,
      channel: delivery.channel,
      providerMessageId: sent.providerMessageId,
      ...simulatedOutcome(delivery.to),
    });
  } catch (err) {
    logger.warn({ deliveryId: delivery.id, err: (err as Error).message }, 'test-mode receipt not applied');
  }
}
