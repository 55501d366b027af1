import { BadRequestError, ValidationError } from '../platform/errors/app-error.js';
import { describeSchemaError } from '../platform/schemas/schema-error-message.js';
import { getValidator } from '../platform/schemas/schema-registry.js';
import { DEFAULT_LEGACY_OTP_SPEC, legacySpecToSegment } from './otp-legacy-spec.js';
import { normalizeSegments } from './otp-segment.rules.js';
import type { GenerateOtpBody, GenerateOtpRequest, HashSpec, OtpChannel } from './otp.types.js';

const SCHEMA_ID = 'otp.generate.json';

/** Fields whose absence (or null) is a 400 rather than a 422, in check order. */
export const MANDATORY_OTP_FIELDS = ['userId', 'dispatchOptions', 'dynamicMacros', 'attempts', 'expiresIn'] as const;

export const DEFAULT_HASH_SPEC: HashSpec = 'SHA_512';

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutLegacySpec(body: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...body };
  delete copy.otpSpec;
  return copy;
}

/**
 * Validates a Generate OTP body and returns it normalized: one segment list whatever format was
 * sent, defaults applied. Throws BadRequestError (400: a mandatory field missing) or ValidationError (422: any other rule); checks that
 * need I/O (user, templates, macro completeness) are left to the caller.
 */
export function parseGenerateOtpRequest(body: unknown): GenerateOtpRequest {
  if (!isJsonObject(body)) throw new BadRequestError('Request body must be a JSON object');
  for (const field of MANDATORY_OTP_FIELDS) {
    if (body[field] === undefined || body[field] === null) throw new BadRequestError(`Missing mandatory field: ${field}`);
  }

  // Both formats sent: otpSpecs is used and otpSpec ignored, so it is not checked either.
  const checked = body.otpSpecs !== undefined && body.otpSpec !== undefined ? withoutLegacySpec(body) : body;
  const validate = getValidator<GenerateOtpBody>(SCHEMA_ID);
  if (!validate(checked)) {
    const [first] = validate.errors ?? [];
    throw new ValidationError(first ? describeSchemaError(SCHEMA_ID, first) : 'Invalid request body');
  }

  const [fallback] = Object.entries(checked.fallbackDispatchOptions ?? {}) as [OtpChannel, string][];
  if (fallback && checked.dispatchOptions[fallback[0]] !== undefined) {
    throw new ValidationError(`fallbackDispatchOptions.${fallback[0]}: the channel is already in dispatchOptions`);
  }

  // otpSpecs wins when both are sent; the legacy format (or its N-6 default) otherwise.
  const segments =
    checked.otpSpecs !== undefined
      ? normalizeSegments(checked.otpSpecs)
      : [legacySpecToSegment(checked.otpSpec ?? DEFAULT_LEGACY_OTP_SPEC)];

  return Object.freeze({
    userId: checked.userId,
    segments: Object.freeze(segments),
    channels: Object.freeze({ ...checked.dispatchOptions }),
    ...(fallback ? { fallback: Object.freeze({ channel: fallback[0], template: fallback[1] }) } : {}),
    dynamicMacros: Object.freeze({ ...checked.dynamicMacros }),
    attempts: checked.attempts,
    expiresIn: checked.expiresIn,
    hashSpec: checked.hashSpec ?? DEFAULT_HASH_SPEC,
    ...(checked.msgId !== undefined ? { msgId: checked.msgId } : {}),
    generateJwt: checked.generateJwt ?? false,
  });
}
