import { memoryLogger } from '../../support/test-service.js';
import { PermanentProviderError, TransientProviderError } from '../../../core/providers/provider-errors.js';
import type { SmsMessage, SmsProvider } from '../../../core/providers/provider.types.js';
import { countsAgainstProvider, createSmsRouting, isRecipientFailure } from '../../../core/providers/sms-routing.js';

const message: SmsMessage = { to: '+15550001111', text: 'code 123456' };
const breaker = { errorPercent: 50, windowMs: 60000, minRequests: 2, resetMs: 60000 };

/** An account whose answers the test sets: ok, or the error it throws. */
function account(name: SmsProvider['name']) {
  const calls: SmsMessage[] = [];
  let failure: Error | undefined;
  const provider: SmsProvider = {
    name,
    send: async (sent) => {
      calls.push(sent);
      if (failure) throw failure;
      return { providerMessageId: `${name}-${calls.length}` };
    },
  };
  return { provider, calls, fail: (err: Error | undefined) => (failure = err) };
}

describe('which failures count against a provider account', () => {
  test.each([
    ['a transient failure (outage, throttling)', new TransientProviderError('down', undefined, 503), true, false],
    ['refused credentials (401)', new PermanentProviderError('Authenticate', 401, '20003'), true, false],
    ['a forbidden account (403)', new PermanentProviderError('Forbidden', 403, undefined), true, false],
    ['an invalid number (400, 21211)', new PermanentProviderError('invalid', 400, '21211'), false, true],
    ['an SDK-side refusal (no status)', new PermanentProviderError('bad', undefined, undefined), false, true],
  ])('%s', (_label, err, counts, recipient) => {
    expect(countsAgainstProvider(err)).toBe(counts);
    expect(isRecipientFailure(err)).toBe(recipient);
  });
});

describe('SMS routing between two accounts', () => {
  test('when there is one account, then every send goes to it and failures come back as they are', async () => {
    const primary = account('twilio');
    const routing = createSmsRouting(primary.provider, undefined, breaker, memoryLogger().logger);
    primary.fail(new TransientProviderError('down', undefined, 503));
    for (let i = 0; i < 5; i += 1) expect(await routing.send(message)).toEqual(expect.objectContaining({ ok: false, provider: 'twilio' }));
    expect(primary.calls).toHaveLength(5);
    expect(routing.hasSecondary).toBe(false);
  });

  test('when the primary fails past the threshold, then unrouted sends go to the secondary; routed ones keep their account', async () => {
    const primary = account('twilio');
    const secondary = account('twilio-secondary');
    const routing = createSmsRouting(primary.provider, secondary.provider, breaker, memoryLogger().logger);
    primary.fail(new TransientProviderError('down', undefined, 503));
    await routing.send(message);
    await routing.send(message);
    expect(primary.calls).toHaveLength(2);
    expect(await routing.send(message)).toEqual({
      ok: true,
      sent: { providerMessageId: 'twilio-secondary-1' },
      provider: 'twilio-secondary',
    });
    expect(primary.calls).toHaveLength(2);
    // A row routed to the failing account waits (a transient failure, retried) rather than going elsewhere.
    const routed = await routing.send(message, 'primary');
    expect(routed).toEqual(expect.objectContaining({ ok: false, provider: 'twilio' }));
    expect(routed.ok === false && routed.error instanceof TransientProviderError).toBe(true);
    expect(await routing.send(message, 'secondary')).toEqual(expect.objectContaining({ ok: true, provider: 'twilio-secondary' }));
    routing.close();
  });

  test("when the failures are the recipients' (invalid numbers), then the primary keeps its traffic", async () => {
    const primary = account('twilio');
    const secondary = account('twilio-secondary');
    const routing = createSmsRouting(primary.provider, secondary.provider, breaker, memoryLogger().logger);
    primary.fail(new PermanentProviderError('invalid', 400, '21211'));
    for (let i = 0; i < 4; i += 1) await routing.send(message);
    primary.fail(undefined);
    expect(await routing.send(message)).toEqual(expect.objectContaining({ ok: true, provider: 'twilio' }));
    expect(secondary.calls).toHaveLength(0);
    routing.close();
  });
});
