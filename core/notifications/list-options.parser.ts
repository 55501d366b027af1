import { BadRequestError } from '../platform/errors/app-error.js';
import { parseClientLibraryDate } from './notification-dates.js';
import { FINAL_STATUSES, type FinalStatus } from './notification.types.js';
import type { HistoryOptions, ListOptions } from './notifications.service.js';

export type QueryValues = Record<string, unknown>;

const bad = (field: string, rule: string) => new BadRequestError(`Invalid field ${field}: ${rule}`);

/** The client library sends unused optional strings as empty strings: both mean absent. */
function text(query: QueryValues, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw bad(name, 'must be given once');
  return value;
}

function count(query: QueryValues, name: string, fallback: number, min: number): number {
  const value = text(query, name);
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(value) || Number(value) < min) throw bad(name, `must be an integer of at least ${min}`);
  return Number(value);
}

function date(query: QueryValues, name: string): Date | undefined {
  const value = text(query, name);
  if (value === undefined) return undefined;
  const parsed = parseClientLibraryDate(value);
  if (!parsed) throw bad(name, "must be yyyy-MM-dd'T'HH:mm:ss followed by a zone abbreviation (UTC, IST...) or an offset (+05:30)");
  return parsed;
}

/** GetNotifications' parameters: recordCount (0 = all, the default), startIndex (from 1), enterpriseID, startDate, endDate. */
export function parseListOptions(query: QueryValues): ListOptions {
  const startDate = date(query, 'startDate');
  const endDate = date(query, 'endDate');
  if (startDate && endDate && startDate.getTime() > endDate.getTime()) throw bad('endDate', 'must not be before startDate');
  const enterpriseFilter = text(query, 'enterpriseID');
  return {
    recordCount: count(query, 'recordCount', 0, 0),
    startIndex: count(query, 'startIndex', 1, 1),
    ...(enterpriseFilter !== undefined ? { enterpriseFilter } : {}),
    ...(startDate ? { startDate } : {}),
    ...(endDate ? { endDate } : {}),
  };
}

/** GetNotificationHistory's parameters: those of the list plus its filters. */
export function parseHistoryOptions(query: QueryValues): HistoryOptions {
  const status = text(query, 'notificationStatus');
  if (status !== undefined && !(FINAL_STATUSES as readonly string[]).includes(status))
    throw bad('notificationStatus', `must be one of ${FINAL_STATUSES.join(', ')}`);
  const actionPerformed = text(query, 'actionPerformed');
  const keywordSearch = text(query, 'keywordSearch');
  const deviceId = text(query, 'deviceID');
  if (keywordSearch !== undefined && keywordSearch.length > 200) throw bad('keywordSearch', 'must be at most 200 characters');
  return {
    ...parseListOptions(query),
    ...(status !== undefined ? { notificationStatus: status as FinalStatus } : {}),
    ...(actionPerformed !== undefined ? { actionPerformed } : {}),
    ...(keywordSearch !== undefined ? { keywordSearch } : {}),
    ...(deviceId !== undefined ? { deviceId } : {}),
  };
}
