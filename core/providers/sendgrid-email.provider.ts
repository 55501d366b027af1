import { randomUUID } from 'node:crypto';
import { Client } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import type { SendgridConfig } from '../platform/config/config.js';
import { classifyHttpFailure, classifyNetworkFailure, PermanentProviderError } from './provider-errors.js';
import type { EmailMessage, EmailProvider, SentMessage } from './provider.types.js';
import { SENDGRID_REFERENCE_ARG } from './sendgrid-reference.js';

interface SendgridFailure {
  code?: unknown;
  isAxiosError?: boolean;
  response?: { headers?: Record<string, unknown>; body?: unknown };
}

function describeSendgridBody(body: unknown): string {
  const errors = (body as { errors?: { message?: unknown; field?: unknown }[] } | undefined)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return 'no reason given';
  return errors.map((e) => (e.field ? `${String(e.field)}: ${String(e.message)}` : String(e.message))).join('; ');
}

/** Sends e-mail through the real @sendgrid/mail SDK, on its own MailService (not the global one). */
export class SendgridEmailProvider implements EmailProvider {
  readonly name = 'sendgrid';
  private readonly mail: MailService;

  constructor(
    config: SendgridConfig,
    private readonly from: string,
    options: { timeoutMs?: number } = {},
  ) {
    const client = new Client();
    // Order matters: setApiKey resets the default request, so the base URL comes after it.
    client.setApiKey(config.apiKey);
    if (config.apiBaseUrl) client.setDefaultRequest('baseUrl', config.apiBaseUrl);
    this.mail = new MailService();
    this.mail.setClient(client);
    this.mail.setTimeout(options.timeoutMs ?? 15000);
  }

  async send(message: EmailMessage): Promise<SentMessage> {
    const reference = randomUUID();
    const customArgs = {
      ...message.customArgs,
      ...(message.otpUuid ? { otpUuid: message.otpUuid } : {}),
      [SENDGRID_REFERENCE_ARG]: reference,
    };
    try {
      const [response] = await this.mail.send({
        from: this.from,
        // Top-level custom_args is mis-typed in SendGrid's own spec; per-personalization is equivalent.
        personalizations: [{ to: [{ email: message.to }], customArgs }],
        subject: message.subject,
        content: [{ type: 'text/plain', value: message.text }, ...(message.html ? [{ type: 'text/html', value: message.html }] : [])],
      });
      const header = response.headers['x-message-id'] as unknown;
      // SendGrid names the message in X-Message-Id; the Prism mock sends none, so our reference
      // (also present in every event as custom arg svc_ref) stands in for it.
      return { providerMessageId: typeof header === 'string' && header !== '' ? header : reference };
    } catch (err) {
      const failure = err as SendgridFailure;
      if (typeof failure.code === 'number' && failure.response) {
        throw classifyHttpFailure(
          { status: failure.code, headers: failure.response.headers ?? {}, reason: describeSendgridBody(failure.response.body) },
          'SendGrid',
        );
      }
      if (failure.isAxiosError === true || typeof failure.code === 'string') throw classifyNetworkFailure(err, 'SendGrid');
      // The SDK's own validation of the message, before any request: retrying repeats it.
      throw new PermanentProviderError(err instanceof Error ? err.message : String(err), undefined, undefined, { cause: err });
    }
  }
}
