export type Channel = 'SMS' | 'EMAIL';
export type DeliveryState = 'QUEUED' | 'SENT' | 'DELIVERED' | 'FAILED';
/** `notice`: a message that carries no code, e.g. telling a user a passkey was added to their account. */
export type DeliveryKind = 'otp' | 'activation' | 'login' | 'notice';

/** The delivery (and dispatch job) id of an OTP's message on one channel. */
export const otpDeliveryId = (otpUuid: string, channel: Channel) => `otp-${otpUuid}-${channel}`;

/** The delivery (and job) id of one resend of an OTP on one channel: `otp-<uuid>-<channel>-<resendId>`. */
export const otpResendDeliveryId = (otpUuid: string, channel: Channel, resendId: string) =>
  `${otpDeliveryId(otpUuid, channel)}-${resendId}`;

/** Every delivery id an OTP can have: its first messages, then those of each resend. */
export const otpDeliveryIds = (otpUuid: string, channels: readonly Channel[], resends: readonly string[] = []) => [
  ...channels.map((channel) => otpDeliveryId(otpUuid, channel)),
  ...resends.flatMap((resendId) => channels.map((channel) => otpResendDeliveryId(otpUuid, channel, resendId))),
];

export type FailoverStep = 1 | 2;

/** The delivery (and job) id of a failover row: one per step, so a repeated trigger sends nothing twice. */
export const failoverDeliveryId = (originalId: string, step: FailoverStep) => `${originalId}-failover-${step}`;

/** The id of the message a failover row stands in for (itself for an original row). */
export const originalDeliveryId = (id: string) => id.replace(/-failover-[12]$/, '');

/** One message to one address through one channel: the unit the dispatch worker delivers. */
export interface Delivery {
  /** Also the BullMQ job id, e.g. `otp-<uuid>-SMS`: retries and re-enqueues deduplicate on it. */
  id: string;
  kind: DeliveryKind;
  /** The enterprise of the user the message goes to (absent on rows written before enterprises: `default`). */
  enterpriseId?: string;
  /** The OTP uuid, or the user id (activation, notice) the message belongs to. */
  refId: string;
  channel: Channel;
  to: string;
  template: string;
  /**
   * A failover row (delivery-failover.ts): 1 = the same message through the channel's other
   * account, 2 = the OTP's fallback channel. Its id is `<failed row's first id>-failover-<n>`.
   */
  failover?: FailoverStep;
  /** The SMS account this row must go through (a failover row); unset lets the breakers choose. */
  route?: 'primary' | 'secondary';
  /** Sent for a test client: never reaches a provider (workers/dispatch/test-mode-send.ts). */
  test?: boolean;
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
