// Argument checks run before any request, so an app learns about a bad argument (code 4) without a
// round trip, the same way on every platform.
import { invalidArgument, type OperationName } from './errors.js';
import { toServiceDate, type RangeEnd } from './service-dates.js';

const ACTION_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const HISTORY_STATUSES = ['UPDATED', 'EXPIRED', 'TAMPERED', 'DISMISSED', 'DISCARD', 'CANCELLED'] as const;

function refuse(operation: OperationName, message: string): never {
  throw invalidArgument(operation, message);
}

export function checkRecordCount(operation: OperationName, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    refuse(operation, 'recordCount must be an integer of 0 or more (0 means all)');
  return value;
}

export function checkStartIndex(operation: OperationName, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) refuse(operation, 'startIndex must be an integer of 1 or more');
  return value;
}

/** An optional string argument: '' (or nothing) means "not used". */
export function checkOptionalString(operation: OperationName, name: string, value: unknown, maxLength = 256): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') refuse(operation, `${name} must be a string ('' when unused)`);
  if (value.length > maxLength) refuse(operation, `${name} must be at most ${maxLength} characters`);
  return value;
}

/** A date argument: a text in one of the service's forms, a toISOString() text, or a Date. */
export type DateArgument = string | Date;

const DATE_RULE =
  'must be a Date or look like 2026-11-22T09:30:00Z, 2026-11-22T09:30:00UTC, 2026-11-22T15:00:00+05:30 or 2026-11-22T09:30:00.000Z';

function checkDate(operation: OperationName, name: string, value: unknown, end: RangeEnd) {
  if (value instanceof Date) {
    const date = toServiceDate(value, end);
    if (!date) refuse(operation, `${name} is an invalid Date`);
    return date;
  }
  const text = checkOptionalString(operation, name, value);
  if (text === '') return undefined;
  const date = toServiceDate(text, end);
  if (!date) refuse(operation, `${name} ${DATE_RULE}`);
  return date;
}

/** startDate and endDate as the service is sent them ('' when unused); the end may not come first. */
export function checkDateRange(operation: OperationName, startDate: unknown, endDate: unknown): { startDate: string; endDate: string } {
  const start = checkDate(operation, 'startDate', startDate, 'start');
  const end = checkDate(operation, 'endDate', endDate, 'end');
  if (start && end && start.instant.getTime() > end.instant.getTime()) refuse(operation, 'endDate must not be before startDate');
  return { startDate: start?.text ?? '', endDate: end?.text ?? '' };
}

export function checkStatus(operation: OperationName, value: unknown): string {
  const text = checkOptionalString(operation, 'notificationStatus', value);
  if (text !== '' && !(HISTORY_STATUSES as readonly string[]).includes(text))
    refuse(operation, `notificationStatus must be one of ${HISTORY_STATUSES.join(', ')}`);
  return text;
}

export function checkNotificationId(operation: OperationName, value: unknown): string {
  if (typeof value !== 'string' || !UUID_PATTERN.test(value)) refuse(operation, 'notificationID must be a notification_uuid');
  return value.toLowerCase();
}

export function checkAction(operation: OperationName, name: string, value: unknown): string {
  if (typeof value !== 'string' || !ACTION_PATTERN.test(value))
    refuse(operation, `${name} must be an action value such as accept or reject`);
  return value;
}

export function checkActionFilter(operation: OperationName, value: unknown): string {
  const text = checkOptionalString(operation, 'actionPerformed', value);
  return text === '' ? text : checkAction(operation, 'actionPerformed', text);
}

export function checkMatchingNumber(operation: OperationName, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  const text = typeof value === 'number' ? String(value).padStart(2, '0') : value;
  if (typeof text !== 'string' || !/^\d{2}$/.test(text))
    refuse(operation, 'number must be the two digits shown by the app asking for approval');
  return text;
}
