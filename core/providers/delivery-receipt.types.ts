export interface DeliveryReceipt {
  /** `test`: a receipt simulated for a test client's message (test mode). */
  provider: 'twilio' | 'twilio-secondary' | 'sendgrid' | 'test';
  /** The message's channel, when the provider does not tell it (test receipts). */
  channel?: 'SMS' | 'EMAIL';
  /**
   * Twilio: the Message SID. SendGrid: the part of `sg_message_id` before the first dot, which
   * equals the X-Message-Id returned at send time.
   */
  providerMessageId: string;
  /**
   * SendGrid only: our own reference (custom arg `svc_ref`), which SendgridEmailProvider returns
   * as providerMessageId when the API sent no X-Message-Id (the Prism mock). Match on either.
   */
  reference?: string;
  state: 'DELIVERED' | 'FAILED';
  /** Provider's reason for a failure: Twilio ErrorCode, SendGrid bounce/drop reason. */
  error?: string;
}

/** Injected by the composition root; updates the delivery rows (owned by the OTP feature). */
export type RecordDeliveryReceipt = (receipt: DeliveryReceipt) => Promise<void>;
