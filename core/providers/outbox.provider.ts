import type { Logger } from '../platform/logger/logger.js';
import type { OutboxRepository } from './outbox.repository.js';
import { classifyNetworkFailure } from './provider-errors.js';
import type { EmailMessage, EmailProvider, SentMessage, SmsMessage, SmsProvider } from './provider.types.js';

/**
 * The provider used when no credentials are configured: messages are kept in MongoDB and read at
 * GET /admin/outbox, so a person running the service locally can read their OTP.
 */
export class OutboxProvider implements SmsProvider, EmailProvider {
  readonly name = 'outbox';

  constructor(
    private readonly outbox: Pick<OutboxRepository, 'insertOutboxMessage'>,
    private readonly logger: Logger,
  ) {}

  send(message: SmsMessage | EmailMessage): Promise<SentMessage> {
    return 'subject' in message ? this.store('EMAIL', message) : this.store('SMS', message);
  }

  private async store(channel: 'SMS' | 'EMAIL', message: SmsMessage | EmailMessage): Promise<SentMessage> {
    try {
      const stored = await this.outbox.insertOutboxMessage({
        channel,
        to: message.to,
        text: message.text,
        ...('subject' in message ? { subject: message.subject } : {}),
        ...('html' in message && message.html !== undefined ? { html: message.html } : {}),
        ...(message.otpUuid ? { otpUuid: message.otpUuid } : {}),
      });
      this.logger.info({ channel, to: message.to, outboxId: stored.id }, 'message stored in the outbox');
      return { providerMessageId: `outbox-${stored.id}` };
    } catch (err) {
      // MongoDB unavailable: the same message can be stored later.
      throw classifyNetworkFailure(err, 'outbox');
    }
  }
}
