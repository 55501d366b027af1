import { ValidationError } from '../platform/errors/app-error.js';
import { getValidator } from '../platform/schemas/schema-registry.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';
import { checkMobileNumberCountry } from './mobile-number-country.js';

/** Enrollment request after validation and normalisation. */
export interface EnrollmentRequest {
  userId: string;
  primaryGroup: string;
  firstName: string;
  lastName: string;
  secondaryGroups: string[];
  emailId?: string;
  mobileNumber?: string;
  preferredStatus: 'CREATED' | 'ONBOARDING';
  predefinedCode?: string;
  predefinedVerKey?: string;
  sourceType: 'SVC' | 'SVC-AD';
  loginId: string;
  comments?: string;
  selfieImage?: string;
}

const SCHEMA = 'users.create.json';

// The 422 names the first invalid field in this order (the contract's field order), whatever the
// order of the body's keys, so each field is checked on its own instead of by one Ajv pass
// (Ajv reports `required` before any property rule).
const FIELDS = [
  'userId',
  'primaryGroup',
  'firstName',
  'lastName',
  'secondaryGroups',
  'emailId',
  'mobileNumber',
  'preferredStatus',
  'predefinedCode',
  'predefinedVerKey',
  'sourceType',
  'loginId',
  'comments',
  'selfieImage',
] as const;
const REQUIRED = new Set<string>(['userId', 'primaryGroup', 'firstName', 'lastName']);

const invalid = (field: string) => new ValidationError(`[Invalid field ${field}]`, { error: 'Invalid data.' });

let fieldValidators: Map<string, (value: unknown) => boolean> | undefined;
function validatorOf(field: string): (value: unknown) => boolean {
  fieldValidators ??= new Map(FIELDS.map((name) => [name, getValidator(`${SCHEMA}#/properties/${name}`) as (value: unknown) => boolean]));
  return fieldValidators.get(field) as (value: unknown) => boolean;
}

/** Whether enrolling sends the user a code: a generated one, to an address given (a predefinedCode is the caller's to hand out). */
export function sendsActivationCode(request: Pick<EnrollmentRequest, 'predefinedCode' | 'emailId' | 'mobileNumber'>): boolean {
  return request.predefinedCode === undefined && (request.emailId !== undefined || request.mobileNumber !== undefined);
}

/** Comma-separated, blanks trimmed, empty items dropped (duplicates kept once). */
export function splitGroups(value: string | undefined): string[] {
  if (value === undefined) return [];
  return [
    ...new Set(
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    ),
  ];
}

/**
 * Validates a parsed JSON object field by field in table order; 422 `[Invalid field <name>]`.
 * `smsCountries`: the deployment's SMS_ALLOWED_COUNTRIES; a mobile number of another country is
 * the mobileNumber field's 422 (with a `reason`).
 */
export function parseEnrollmentRequest(body: Record<string, unknown>, smsCountries?: SmsCountries): EnrollmentRequest {
  const has = (field: string) => Object.prototype.hasOwnProperty.call(body, field);
  for (const field of FIELDS) {
    if (!has(field)) {
      if (REQUIRED.has(field)) throw invalid(field);
      // Without predefinedCode, a generated code must be sent somewhere.
      if (field === 'emailId' && !has('mobileNumber') && !has('predefinedCode')) throw invalid(field);
      continue;
    }
    if (!validatorOf(field)(body[field])) throw invalid(field);
    if (field === 'mobileNumber') checkMobileNumberCountry(body[field], smsCountries);
  }
  const unknown = Object.keys(body).find((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) throw invalid(unknown);

  const b = body as Record<(typeof FIELDS)[number], string | undefined>;
  return {
    userId: b.userId as string,
    primaryGroup: b.primaryGroup as string,
    firstName: b.firstName as string,
    lastName: b.lastName as string,
    secondaryGroups: splitGroups(b.secondaryGroups),
    emailId: b.emailId,
    mobileNumber: b.mobileNumber,
    preferredStatus: (b.preferredStatus as EnrollmentRequest['preferredStatus'] | undefined) ?? 'CREATED',
    predefinedCode: b.predefinedCode,
    predefinedVerKey: b.predefinedVerKey,
    sourceType: (b.sourceType as EnrollmentRequest['sourceType'] | undefined) ?? 'SVC',
    loginId: b.loginId ?? (b.userId as string),
    comments: b.comments,
    selfieImage: b.selfieImage,
  };
}
