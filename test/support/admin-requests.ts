import type { TestService } from './test-service.js';

/** A call to the admin API with the operator's token; `body`, when given, is sent as JSON. */
export function adminRequest(
  service: Pick<TestService, 'url' | 'config'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
