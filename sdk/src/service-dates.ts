// startDate and endDate of GetNotifications and GetNotificationHistory, in every form the service
// accepts plus the forms JavaScript produces (Date objects, toISOString()'s milliseconds), checked
// before any request so a bad date never costs a round trip.

/**
 * The zone abbreviations the service knows, with the one meaning it gives each (IST is India).
 * The same table as the service's; a test keeps the two equal.
 */
export const ZONE_OFFSETS_MINUTES: Readonly<Record<string, number>> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  BST: 60,
  CET: 60,
  CEST: 120,
  WAT: 60,
  EET: 120,
  EEST: 180,
  CAT: 120,
  EAT: 180,
  MSK: 180,
  GST: 240,
  PKT: 300,
  IST: 330,
  NPT: 345,
  ICT: 420,
  WIB: 420,
  SGT: 480,
  HKT: 480,
  AWST: 480,
  CST: -360,
  CDT: -300,
  EST: -300,
  EDT: -240,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  JST: 540,
  KST: 540,
  ACST: 570,
  AEST: 600,
  AEDT: 660,
  NZST: 720,
  NZDT: 780,
};

/**
 * `yyyy-MM-dd'T'HH:mm:ss`, optional fractions of a second (the service takes none; the library
 * converts them), then, optionally after a space, a zone abbreviation or an offset (`+05:30`,
 * `+0530`).
 */
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ?(?:([A-Z]{1,5})|([+-])(\d{2}):?(\d{2}))$/;

/** What a date argument stands for: the instant, and the text the service is sent. */
export interface ServiceDate {
  instant: Date;
  text: string;
}

/** Which end of a range a date is: a start is rounded down to the second, an end up. */
export type RangeEnd = 'start' | 'end';

/** The instant a date text names, or undefined when the text is not a date the library takes. */
export function parseServiceDate(text: string): { instant: Date; hasFraction: boolean } | undefined {
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zone, sign, oh, om] = m;
  let offset: number;
  if (zone !== undefined) {
    const known = ZONE_OFFSETS_MINUTES[zone];
    if (known === undefined) return undefined;
    offset = known;
  } else {
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(utc);
  // Date.UTC rolls 31 February over to March: a date that does not round-trip is not real.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  const milliseconds = fraction === undefined ? 0 : Number(`0.${fraction}`) * 1000;
  return { instant: new Date(utc - offset * 60_000 + milliseconds), hasFraction: fraction !== undefined };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The service's UTC form of a whole second: 2026-11-22T09:30:00Z. */
export function formatServiceDate(instant: Date): string {
  return (
    `${pad(instant.getUTCFullYear(), 4)}-${pad(instant.getUTCMonth() + 1)}-${pad(instant.getUTCDate())}` +
    `T${pad(instant.getUTCHours())}:${pad(instant.getUTCMinutes())}:${pad(instant.getUTCSeconds())}Z`
  );
}

/**
 * The service counts whole seconds. A date with milliseconds widens the range to the whole
 * second around it (a start rounds down, an end up), so no notification inside the range the app
 * asked for is left out.
 */
function toWholeSecond(instant: Date, end: RangeEnd): Date {
  const ms = instant.getTime();
  const rounded = end === 'start' ? Math.floor(ms / 1000) * 1000 : Math.ceil(ms / 1000) * 1000;
  return new Date(rounded);
}

/**
 * A date argument as the service is sent it, or undefined when it is not a date. Texts the service
 * takes as they are go unchanged; Dates and texts with fractions of a second go in UTC.
 */
export function toServiceDate(value: string | Date, end: RangeEnd): ServiceDate | undefined {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined;
    const whole = toWholeSecond(value, end);
    // Years outside 0000-9999 have no yyyy form.
    if (whole.getUTCFullYear() < 0 || whole.getUTCFullYear() > 9999) return undefined;
    return { instant: value, text: formatServiceDate(whole) };
  }
  const parsed = parseServiceDate(value);
  if (!parsed) return undefined;
  if (!parsed.hasFraction) return { instant: parsed.instant, text: value };
  return { instant: parsed.instant, text: formatServiceDate(toWholeSecond(parsed.instant, end)) };
}
