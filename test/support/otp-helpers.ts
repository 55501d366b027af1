import { warningsIn, type TestService } from './test-service.js';
import { eventually } from './waiting.js';

// Most tests import it from here, next to the outbox they wait on.
export { eventually };

export interface OutboxEntry {
  channel: 'SMS' | 'EMAIL';
  to: string;
  subject?: string;
  text: string;
  html?: string;
  createdAt: string;
  otpUuid?: string;
}

export async function readOutbox(service: TestService, to: string): Promise<OutboxEntry[]> {
  const res = await fetch(`${service.url}/admin/outbox?to=${encodeURIComponent(to)}&limit=100`, {
    headers: { authorization: `Bearer ${service.config.adminToken}` },
  });
  if (res.status !== 200) throw new Error(`outbox answered ${res.status}`);
  return (await res.json()) as OutboxEntry[];
}

/** Waits for the outbox message of one OTP and returns it; when it never comes, says what the outbox and the service's log held. */
export function outboxMessageFor(service: TestService, to: string, otpUuid: string): Promise<OutboxEntry> {
  return eventually(async () => (await readOutbox(service, to)).find((m) => m.otpUuid === otpUuid)).catch(async (err: Error) => {
    const outbox = (await readOutbox(service, to)).map((m) => `${m.createdAt} ${m.otpUuid ?? '-'}`);
    const logged = warningsIn(service.logLines());
    throw new Error(`no message of OTP ${otpUuid} for ${to}: ${JSON.stringify({ outbox, logged }, null, 1)}`, { cause: err });
  });
}

export function postJson(url: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A valid Generate OTP body; override what a test is about. */
export function otpBody(userId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { userId, dispatchOptions: { SMS: 'otp_sms' }, dynamicMacros: {}, attempts: 3, expiresIn: 300, ...overrides };
}
