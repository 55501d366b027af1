import { ValidationError } from '../platform/errors/app-error.js';
import { getValidator } from '../platform/schemas/schema-registry.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';
import { checkMobileNumberCountry } from './mobile-number-country.js';
import { splitGroups } from './enrollment-request.validator.js';
import type { UserChanges } from './users.repository.js';

/** A PATCH body after validation and normalisation (as at enrollment). */
export interface UserUpdateRequest {
  changes: UserChanges;
  /** Kept in the activity record, not on the user. */
  comments?: string;
}

const SCHEMA = 'users.update.json';
// Reported in this order, the enrollment contract's, whatever the order of the body's keys.
const FIELDS = ['primaryGroup', 'firstName', 'lastName', 'secondaryGroups', 'emailId', 'mobileNumber', 'comments'] as const;

const invalid = (field: string) => new ValidationError(`[Invalid field ${field}]`, { error: 'Invalid data.' });

let fieldValidators: Map<string, (value: unknown) => boolean> | undefined;
function validatorOf(field: string): (value: unknown) => boolean {
  fieldValidators ??= new Map(FIELDS.map((name) => [name, getValidator(`${SCHEMA}#/properties/${name}`) as (value: unknown) => boolean]));
  return fieldValidators.get(field) as (value: unknown) => boolean;
}

/** Field by field, then unknown fields; an empty body is 422 too (there is nothing to change). A mobile number outside `smsCountries` is 422 as at enrollment. */
export function parseUserUpdateRequest(body: Record<string, unknown>, smsCountries?: SmsCountries): UserUpdateRequest {
  const has = (field: string) => Object.prototype.hasOwnProperty.call(body, field);
  for (const field of FIELDS) {
    if (!has(field)) continue;
    if (!validatorOf(field)(body[field])) throw invalid(field);
    if (field === 'mobileNumber') checkMobileNumberCountry(body[field], smsCountries);
  }
  const unknown = Object.keys(body).find((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) throw invalid(unknown);
  const b = body as { [K in (typeof FIELDS)[number]]?: string | null };
  const changes: UserChanges = {
    ...(has('primaryGroup') ? { primaryGroup: b.primaryGroup as string } : {}),
    ...(has('firstName') ? { firstName: b.firstName as string } : {}),
    ...(has('lastName') ? { lastName: b.lastName as string } : {}),
    ...(has('secondaryGroups') ? { secondaryGroups: splitGroups(b.secondaryGroups as string) } : {}),
    ...(has('emailId') ? { emailId: b.emailId ?? null } : {}),
    ...(has('mobileNumber') ? { mobileNumber: b.mobileNumber ?? null } : {}),
  };
  if (Object.keys(changes).length === 0) {
    throw new ValidationError(
      'Nothing to change: give at least one of primaryGroup, firstName, lastName, secondaryGroups, emailId, mobileNumber',
      {
        error: 'Invalid data.',
      },
    );
  }
  return { changes, ...(b.comments !== undefined && b.comments !== null ? { comments: b.comments } : {}) };
}
