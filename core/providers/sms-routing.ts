import CircuitBreaker from 'opossum';
import type { ProviderBreakerConfig } from '../platform/config/config.js';
import type { Logger } from '../platform/logger/logger.js';
import { providerBreakerState } from '../platform/metrics/business-metrics.js';
import { PermanentProviderError, TransientProviderError } from './provider-errors.js';
import type { SentMessage, SmsMessage, SmsProvider } from './provider.types.js';

/** Which account a message must go through; unset lets the breakers choose. */
export type SmsRoute = 'primary' | 'secondary';

export type SmsAttempt = { ok: true; sent: SentMessage; provider: string } | { ok: false; error: unknown; provider: string };

/**
 * A failure says the account is unwell (outage, throttling, refused credentials), not the message:
 * an invalid or unreachable number fails the same way on every account and moves no traffic.
 */
export function countsAgainstProvider(err: unknown): boolean {
  if (err instanceof TransientProviderError) return true;
  if (err instanceof PermanentProviderError) return err.status === 401 || err.status === 403 || (err.status ?? 0) >= 500;
  return false;
}

/** A recipient's problem (invalid number, opted out): another account would fail the same way. */
export const isRecipientFailure = (err: unknown): boolean => err instanceof PermanentProviderError && !countsAgainstProvider(err);

const OPEN_BREAKER = 'EOPENBREAKER';

/**
 * SMS through a primary and an optional secondary account. Each account has a circuit breaker
 * over its recent error rate: while the primary's is open, new messages go to the secondary;
 * after the reset time one trial message goes to the primary again, and its success brings
 * traffic back. Breakers are per process: each dispatch process learns from its own sends.
 * With one account there is no breaker: failures are retried with backoff as before.
 */
export function createSmsRouting(primary: SmsProvider, secondary: SmsProvider | undefined, config: ProviderBreakerConfig, logger: Logger) {
  const breakerFor = (provider: SmsProvider) => {
    const breaker = new CircuitBreaker((message: SmsMessage) => provider.send(message), {
      timeout: false, // the providers time out their own calls
      errorThresholdPercentage: config.errorPercent,
      rollingCountTimeout: config.windowMs,
      rollingCountBuckets: 10,
      volumeThreshold: config.minRequests,
      resetTimeout: config.resetMs,
      // Returning true keeps the failure out of the error rate.
      errorFilter: (err: unknown) => !countsAgainstProvider(err),
    });
    const state = (value: number, name: string) => () => {
      providerBreakerState.set({ channel: 'SMS', provider: provider.name }, value);
      logger.warn({ provider: provider.name }, `SMS provider breaker ${name}`);
    };
    breaker.on('open', state(1, 'open: new messages go to the other account'));
    breaker.on('halfOpen', state(0.5, 'half open: one trial message'));
    breaker.on('close', state(0, 'closed'));
    providerBreakerState.set({ channel: 'SMS', provider: provider.name }, 0);
    return { provider, breaker };
  };
  const accounts = secondary ? { primary: breakerFor(primary), secondary: breakerFor(secondary) } : undefined;

  async function attempt(account: { provider: SmsProvider; breaker: CircuitBreaker }, message: SmsMessage): Promise<SmsAttempt> {
    try {
      const sent = (await account.breaker.fire(message)) as SentMessage;
      return { ok: true, sent, provider: account.provider.name };
    } catch (error) {
      return { ok: false, error, provider: account.provider.name };
    }
  }
  const refusedByOpenBreaker = (result: SmsAttempt) => !result.ok && (result.error as { code?: unknown })?.code === OPEN_BREAKER;

  return {
    hasSecondary: secondary !== undefined,

    /**
     * One send. A routed message goes through its account only; an unrouted one through the
     * primary, or the secondary while the primary's breaker refuses. Both refusing is a
     * transient failure: the job retries with backoff until a breaker lets a trial through.
     */
    async send(message: SmsMessage, route?: SmsRoute): Promise<SmsAttempt> {
      if (!accounts) {
        try {
          return { ok: true, sent: await primary.send(message), provider: primary.name };
        } catch (error) {
          return { ok: false, error, provider: primary.name };
        }
      }
      const order =
        route === 'secondary' ? [accounts.secondary] : route === 'primary' ? [accounts.primary] : [accounts.primary, accounts.secondary];
      let last: SmsAttempt | undefined;
      for (const account of order) {
        last = await attempt(account, message);
        if (!refusedByOpenBreaker(last)) return last;
      }
      const provider = last?.provider ?? primary.name;
      return {
        ok: false,
        provider,
        error: new TransientProviderError(`${provider} is failing (circuit open); retrying later`, undefined, undefined),
      };
    },

    /** Which account a message routed so goes through (for a row's `provider` before sending). */
    nameOf(route: SmsRoute): string {
      return route === 'secondary' && secondary ? secondary.name : primary.name;
    },

    close(): void {
      accounts?.primary.breaker.shutdown();
      accounts?.secondary.breaker.shutdown();
    },
  };
}

export type SmsRouting = ReturnType<typeof createSmsRouting>;
