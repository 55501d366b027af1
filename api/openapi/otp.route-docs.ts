import { IDEMPOTENCY_KEY_SCHEMA, idempotentReplayedHeader } from './idempotency-key-docs.js';
import { rateLimitedHeaders, rateLimitHeaders } from './rate-limit-header-docs.js';
import type { RouteDoc } from './route-docs.types.js';

const error = (description: string) => ({ description, schema: 'common.error.json' });
const bearer = { kind: 'bearer', scope: 'otp' } as const;
// Generate and Resend take from the same budgets; so do their refusals that come after the budgets
// were taken (an unknown user or template), while a replay and a refusal of the request itself carry none.
const SENDING_BUDGETS = 'otp-per-client, otp-per-enterprise, otp-per-user';
const sent = { ...rateLimitHeaders(SENDING_BUDGETS), ...idempotentReplayedHeader };
const budgetsTaken = rateLimitHeaders(SENDING_BUDGETS);
// Validation counts every request whose body was read, whatever its answer.
const checked = rateLimitHeaders('validate-per-client');
const authErrors = {
  '401': {
    description:
      "Missing, malformed, invalid or expired access token (`{error, error_description}`), or the caller's address outside the client's allowedIps: error body with message `IP not whitelisted` and `detail` naming the address seen",
    schema: 'common.unauthorized.json',
  },
  '403': { description: 'Token without the otp scope', schema: 'common.bearer-error.json' },
};

export const otpRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/svc-otp',
    summary: 'Generate an OTP and deliver it by SMS and/or e-mail (optional Idempotency-Key header)',
    tag: 'otp',
    auth: bearer,
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes a retry safe: the same key with the same body answers the first result again and sends nothing more; the same key with another body is 422',
        schema: IDEMPOTENCY_KEY_SCHEMA,
      },
    ],
    requestSchema: 'otp.generate.json',
    responses: {
      '200': {
        description: 'Accepted for delivery (a replay of an Idempotency-Key carries no RateLimit fields)',
        schema: 'otp.generated.json',
        headers: sent,
        links: {
          status: { method: 'get', path: '/v1/svc-otp/{otpUuid}', parameters: { otpUuid: '$response.body#/otpUuid' } },
          validate: { method: 'post', path: '/v1/svc-otp/{otpUuid}/validate', parameters: { otpUuid: '$response.body#/otpUuid' } },
        },
      },
      '400': error('Body empty, not JSON, not an object, or a mandatory field missing or null'),
      ...authErrors,
      '404': { ...error("User not found (in the client's enterprise), with the RateLimit fields"), headers: budgetsTaken },
      '409': {
        ...error(
          "`The request with this Idempotency-Key did not finish and its code is no longer kept: send a new request with a new Idempotency-Key`: the key's first request failed before sending, and the key that sealed its code was dropped since; nothing is sent (with the RateLimit fields)",
        ),
        headers: budgetsTaken,
      },
      '415': error('Content type is not application/json'),
      '422': {
        ...error(
          'Any other validation error: formats, ranges, OTP specification (without the RateLimit fields); template, macros, channel address, Idempotency-Key reuse, SMS as the only channel to a stored mobileNumber outside SMS_ALLOWED_COUNTRIES (with `reason`) (checked once the budgets were taken: with the RateLimit fields)',
        ),
        headers: budgetsTaken,
      },
      '429': { ...error('Rate limit reached (Retry-After header)'), headers: rateLimitedHeaders(SENDING_BUDGETS) },
      '503': error('Not committed within REQUEST_DEADLINE_MS of arrival: nothing will be sent (Retry-After header)'),
    },
  },
  {
    method: 'post',
    path: '/v1/svc-otp/{otpUuid}/validate',
    summary: 'Validate the code the user typed; attempts are counted atomically',
    tag: 'otp',
    auth: bearer,
    requestSchema: 'otp.validate.json',
    responses: {
      '200': { description: 'The code is right', schema: 'otp.validated.json', headers: checked },
      '400': error('Malformed body'),
      ...authErrors,
      '404': { ...error('Unknown otpUuid, or issued to another client'), headers: checked },
      '409': { description: 'USED: already consumed', schema: 'otp.validation-refused.json', headers: checked },
      '410': {
        description: 'EXPIRED, or CANCELLED (the right code is refused too)',
        schema: 'otp.validation-refused.json',
        headers: checked,
      },
      '422': {
        description:
          'FAILED: wrong code, with attemptsLeft and otpUuid (with the RateLimit fields); or a body that breaks the schema (`Invalid field otp: ...`, no otpUuid)',
        schema: 'otp.validate-unprocessable.json',
        headers: checked,
      },
      '423': {
        description: 'LOCKED: no attempts left (the right code is refused too)',
        schema: 'otp.validation-refused.json',
        headers: checked,
      },
      '429': { ...error('Rate limit reached (Retry-After header)'), headers: rateLimitedHeaders('validate-per-client') },
    },
  },
  {
    method: 'get',
    path: '/v1/svc-otp/{otpUuid}',
    summary: 'State of an OTP and of each channel delivery, without the code',
    tag: 'otp',
    auth: bearer,
    responses: {
      '200': { description: 'State', schema: 'otp.status.json' },
      ...authErrors,
      '404': error('Unknown otpUuid, or issued to another client'),
    },
  },
  {
    method: 'delete',
    path: '/v1/svc-otp/{otpUuid}',
    summary: 'Cancel an OTP: it can no longer be validated or resent, and messages not yet handed to a provider are not sent',
    tag: 'otp',
    auth: bearer,
    responses: {
      '200': {
        description: 'CANCELLED, by this call or an earlier one (cancelling again answers the state again)',
        schema: 'otp.status.json',
      },
      ...authErrors,
      '404': error('Unknown otpUuid, or issued to another client'),
      '409': { description: 'Already ended otherwise: status USED, EXPIRED or LOCKED', schema: 'otp.validation-refused.json' },
    },
  },
  {
    method: 'post',
    path: '/v1/svc-otp/{otpUuid}/resend',
    summary:
      'Send the same code again, on the same channels with the same templates, while the OTP is ACTIVE (optional Idempotency-Key header)',
    tag: 'otp',
    auth: bearer,
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes a retry safe: the same key for the same OTP answers again (Idempotent-Replayed: true) and sends nothing more; a key already used for another request is 422',
        schema: IDEMPOTENCY_KEY_SCHEMA,
      },
    ],
    responses: {
      '200': { description: 'Queued: the state, with the new deliveries (`resend`: n)', schema: 'otp.status.json', headers: sent },
      ...authErrors,
      '404': error('Unknown otpUuid, or issued to another client'),
      '409': {
        description:
          'Not ACTIVE: status USED, EXPIRED, LOCKED or CANCELLED (or, status ACTIVE, an OTP generated before resends were possible or whose kept code no longer opens); with the RateLimit fields when it ended while the resend was being admitted',
        schema: 'otp.validation-refused.json',
        headers: budgetsTaken,
      },
      '422': error(
        'Idempotency-Key malformed, or already used for another request; or the OTP goes by SMS alone to a number outside SMS_ALLOWED_COUNTRIES (set after it was made): `reason` says why, nothing is sent and no budget is used',
      ),
      '429': {
        ...error('Rate limit reached: the same per-client and per-user budgets as Generate (Retry-After header)'),
        headers: rateLimitedHeaders(SENDING_BUDGETS),
      },
    },
  },
];
