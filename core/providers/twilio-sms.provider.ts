import twilio from 'twilio';
import type { TwilioConfig } from '../platform/config/config.js';
import { classifyHttpFailure, classifyNetworkFailure, PermanentProviderError, TransientProviderError } from './provider-errors.js';
import type { SentMessage, SmsMessage, SmsProvider } from './provider.types.js';

type RequestOpts = Parameters<twilio.RequestClient['request']>[0];
type TwilioResponse = Awaited<ReturnType<twilio.RequestClient['request']>>;

function describeTwilioBody(body: unknown): { reason: string; providerCode?: string } {
  const parsed = typeof body === 'string' ? safeJson(body) : body;
  const { message, code } = (parsed ?? {}) as { message?: unknown; code?: unknown };
  return {
    reason: typeof message === 'string' ? (code === undefined ? message : `${message} (Twilio ${String(code)})`) : 'no reason given',
    providerCode: code === undefined ? undefined : String(code),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The SDK's RestException drops the response headers, so `Retry-After` would be lost; this client
 * classifies failures where the whole response (status, headers, body) is still at hand.
 */
class ClassifyingRequestClient extends twilio.RequestClient {
  override async request<TData>(opts: RequestOpts): Promise<TwilioResponse & { body: TData }> {
    let response: TwilioResponse;
    try {
      response = await super.request(opts);
    } catch (err) {
      throw classifyNetworkFailure(err, 'Twilio');
    }
    if (response.statusCode >= 400) {
      throw classifyHttpFailure(
        { status: response.statusCode, headers: (response.headers ?? {}) as Record<string, unknown>, ...describeTwilioBody(response.body) },
        'Twilio',
      );
    }
    return response as TwilioResponse & { body: TData };
  }
}

/** Sends SMS through the real Twilio SDK (Messages API). */
export class TwilioSmsProvider implements SmsProvider {
  readonly name: 'twilio' | 'twilio-secondary';
  private readonly client: twilio.Twilio;

  constructor(
    private readonly config: TwilioConfig,
    options: { timeoutMs?: number; keepAlive?: boolean; secondary?: boolean } = {},
  ) {
    this.name = options.secondary ? 'twilio-secondary' : 'twilio';
    this.client = twilio(config.accountSid, config.authToken, {
      httpClient: new ClassifyingRequestClient({ timeout: options.timeoutMs ?? 15000, keepAlive: options.keepAlive ?? true }),
      // Retries belong to the dispatch queue (backoff, attempts), not to the SDK.
      autoRetry: false,
    });
    if (config.apiBaseUrl) this.client.api.baseUrl = config.apiBaseUrl;
  }

  async send(message: SmsMessage): Promise<SentMessage> {
    try {
      const sent = await this.client.messages.create({
        to: message.to,
        body: message.text,
        ...(this.config.messagingServiceSid ? { messagingServiceSid: this.config.messagingServiceSid } : { from: this.config.from }),
        ...(message.statusCallbackUrl ? { statusCallback: message.statusCallbackUrl } : {}),
      });
      return { providerMessageId: sent.sid };
    } catch (err) {
      if (err instanceof TransientProviderError || err instanceof PermanentProviderError) throw err;
      // Anything else (SDK-side validation, unexpected body) is a bug or bad input: retrying repeats it.
      throw new PermanentProviderError(err instanceof Error ? err.message : String(err), undefined, undefined, { cause: err });
    }
  }
}
