/**
 * Dates of the client library's list operations: `yyyy-MM-dd'T'HH:mm:ss` followed (optionally
 * after a space) by a zone abbreviation or an offset (`+05:30`, `+0530`, `Z`). Abbreviations are
 * ambiguous in general; this table fixes one meaning each (IST is India, as the client library's
 * users mean it).
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

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2}) ?(?:([A-Z]{1,5})|([+-])(\d{2}):?(\d{2}))$/;

/** The instant, or undefined when the text is not in the accepted format or not a real date. */
export function parseClientLibraryDate(text: string): Date | undefined {
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, zone, sign, oh, om] = m;
  let offset: number;
  if (zone !== undefined) {
    const known = ZONE_OFFSETS_MINUTES[zone];
    if (known === undefined) return undefined;
    offset = known;
  } else {
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const utc = Date.UTC(fields[0], fields[1] - 1, fields[2], fields[3], fields[4], fields[5]);
  const check = new Date(utc);
  // Date.UTC rolls 31 February over to March; a date that does not round-trip is not real.
  if (check.getUTCMonth() !== fields[1] - 1 || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59)
    return undefined;
  return new Date(utc - offset * 60_000);
}
