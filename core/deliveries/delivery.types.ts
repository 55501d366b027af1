export type Channel = 'SMS' | 'EMAIL';
export type DeliveryState = 'QUEUED' | 'SENT' | 'DELIVERED' | 'FAILED';
export type DeliveryKind = 'otp' | 'activation' | 'login';

/** The delivery (and dispatch job) id of an OTP's message on one channel. */
export const otpDeliveryId = (otpUuid: string, channel: Channel) => `otp-${otpUuid}-${channel}`;

/** One message to one address through one channel: the unit the dispatch worker delivers. */
export interface Delivery {
  /** Also the BullMQ job id, e.g. `otp-<uuid>-SMS`: retries and re-enqueues deduplicate on it. */
  id: string;
  kind: DeliveryKind;
  /** The enterprise of the user the message goes to (absent on rows written before enterprises: `default`). */
  enterpriseId?: string;
  /** The OTP uuid or user id the message belongs to. */
  refId: string;
  channel: Channel;
  to: string;
  template: string;
  /** Non-secret macro values (the caller's dynamicMacros). */
  macros: Record<string, string>;
  /**
   * Secret macro values (the code), AES-GCM encrypted. Removed once the message is sent, and once
   * its sending window (`notAfter`) closes; a row that ended FAILED keeps them until then, so an
   * operator can replay it (delivery-replay.ts).
   */
  secretMacros?: string;
  state: DeliveryState;
  providerMessageId?: string;
  lastError?: string;
  /** The provider the row was going through when it last ended FAILED (a send or a receipt). */
  provider?: string;
  attempts: number;
  /** How many times an operator replayed the row after it ended FAILED. */
  replays?: number;
  /** After this instant the message must never be sent (an expired OTP). */
  notAfter: Date;
  queuedAt: Date;
  updatedAt: Date;
}
