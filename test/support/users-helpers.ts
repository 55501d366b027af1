import type { TestService } from './test-service.js';

export const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;

/** The error body `{timestamp, status, error, message, path}` every enterprise error has; `extra` adds fields such as userStatus. */
export function errorBody(
  status: number,
  error: string,
  message: string,
  path: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { timestamp: expect.stringMatching(D1_TIMESTAMP) as unknown, status, error, message, path, ...extra };
}

/** The 401 of a caller outside the allow-list: the specified message, and the address the server saw. */
export function ipRefused(path: string, address?: string): Record<string, unknown> {
  const detail =
    address === undefined
      ? expect.stringMatching(/^The server saw the address \S+; the client's allowedIps must include it\.$/)
      : `The server saw the address ${address}; the client's allowedIps must include it.`;
  return errorBody(401, 'Unauthorized', 'IP not whitelisted', path, { detail });
}

export async function createGroups(service: TestService, names: string[]): Promise<void> {
  for (const name of names) {
    const res = await fetch(`${service.url}/admin/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    if (res.status !== 201) throw new Error(`group ${name}: ${res.status}`);
  }
}

/** A valid Add user body; override what a test is about. */
export function userBody(userId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { userId, primaryGroup: 'retail', firstName: 'Ada', lastName: 'Lovelace', emailId: `${userId}@example.com`, ...overrides };
}

export function sendJson(
  url: string,
  method: string,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

let counter = 0;
/** A mobile number no other test of the run uses. */
export function uniqueMobile(): string {
  counter += 1;
  return `+1555${String(process.pid % 1000).padStart(3, '0')}${String(counter).padStart(4, '0')}`;
}
