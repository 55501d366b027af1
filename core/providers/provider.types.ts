export interface SmsMessage {
  /** E.164 number. */
  to: string;
  text: string;
  /** Where Twilio posts delivery receipts; normally `${PUBLIC_URL}/webhooks/twilio/status`. */
  statusCallbackUrl?: string;
  /** Stored with outbox messages so a person can find the message of one OTP. */
  otpUuid?: string;
}

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Echoed back in SendGrid events; string values only (SendGrid's rule). */
  customArgs?: Record<string, string>;
  otpUuid?: string;
}

export interface SentMessage {
  providerMessageId: string;
}

/**
 * Implementations throw TransientProviderError (retry later) or PermanentProviderError
 * (give up) from ./provider-errors.ts, and nothing else for provider failures.
 */
export interface SmsProvider {
  /** `twilio-secondary`: the account SMS fails over to (sms-routing.ts). */
  readonly name: 'twilio' | 'twilio-secondary' | 'outbox';
  send(message: SmsMessage): Promise<SentMessage>;
}

export interface EmailProvider {
  readonly name: 'sendgrid' | 'outbox';
  send(message: EmailMessage): Promise<SentMessage>;
}

export interface Providers {
  sms: SmsProvider;
  email: EmailProvider;
  /** A second SMS account, when configured: failover target and breaker fallback (sms-routing.ts). */
  smsSecondary?: SmsProvider;
}
