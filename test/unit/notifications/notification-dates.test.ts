import { parseClientLibraryDate } from '../../../core/notifications/notification-dates.js';

describe('client library dates', () => {
  test.each([
    ['2026-11-21T10:00:00UTC', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00 GMT', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T15:30:00IST', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T05:00:00EST', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T15:30:00+05:30', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T15:30:00+0530', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T02:00:00-08:00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2028-02-29T00:00:00UTC', '2028-02-29T00:00:00.000Z'],
  ])('when the date is %s, then it is the instant %s', (text, iso) => {
    expect(parseClientLibraryDate(text)?.toISOString()).toBe(iso);
  });

  test.each([
    '2026-11-21',
    '2026-11-21T10:00:00',
    '2026-11-21T10:00UTC',
    '2026-02-30T10:00:00UTC',
    '2026-11-21T24:00:00UTC',
    '2026-11-21T10:00:00XYZ',
    '2026-11-21T10:00:00+25:00',
    '21/11/2026 10:00:00 UTC',
    '',
  ])('when the date is %j, then it is refused', (text) => {
    expect(parseClientLibraryDate(text)).toBeUndefined();
  });
});
