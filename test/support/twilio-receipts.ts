import twilio from 'twilio';
import type { TestService } from './test-service.js';

/**
 * Posts a Twilio status callback to the service, signed with `authToken` for the address Twilio
 * would call (the service's public URL), as Twilio posts it: a form body and X-Twilio-Signature.
 */
export function postTwilioStatus(service: TestService, params: Record<string, string>, authToken: string): Promise<Response> {
  const callback = `${service.config.publicUrl}/webhooks/twilio/status`;
  return fetch(`${service.url}/webhooks/twilio/status`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, callback, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}
