import type { Config } from '../platform/config/config.js';
import type { Logger } from '../platform/logger/logger.js';
import { OutboxProvider } from './outbox.provider.js';
import type { OutboxRepository } from './outbox.repository.js';
import type { Providers } from './provider.types.js';
import { SendgridEmailProvider } from './sendgrid-email.provider.js';
import { guardSmsCountries } from './sms-country-policy.js';
import { TwilioSmsProvider } from './twilio-sms.provider.js';

/**
 * Picks each channel on its own: Twilio when TWILIO_ACCOUNT_SID/AUTH_TOKEN are set, SendGrid when
 * SENDGRID_API_KEY is set, else the outbox. Config validation refuses half-configured Twilio.
 */
export function createProviders(
  config: Pick<Config, 'twilio' | 'sendgrid' | 'emailFrom'> & Partial<Pick<Config, 'twilioSecondary' | 'smsAllowedCountries'>>,
  outboxMessages: Pick<OutboxRepository, 'insertOutboxMessage'>,
  logger: Logger,
): Providers {
  const outbox = new OutboxProvider(outboxMessages, logger);
  const countries = config.smsAllowedCountries;
  const sms = guardSmsCountries(config.twilio ? new TwilioSmsProvider(config.twilio) : outbox, countries);
  // Config validation refuses a secondary account without a primary one.
  const smsSecondary =
    config.twilio && config.twilioSecondary
      ? guardSmsCountries(new TwilioSmsProvider(config.twilioSecondary, { secondary: true }), countries)
      : undefined;
  const email = config.sendgrid ? new SendgridEmailProvider(config.sendgrid, config.emailFrom) : outbox;
  logger.info({ sms: sms.name, smsSecondary: smsSecondary?.name, email: email.name }, 'message providers');
  return { sms, email, ...(smsSecondary ? { smsSecondary } : {}) };
}
