import { parseClientLibraryDate, ZONE_OFFSETS_MINUTES as SERVICE_ZONES } from '../../core/notifications/notification-dates.js';
import { NotificationClient, SvcIdentityError } from '../src/index.js';
import { parseServiceDate, toServiceDate, ZONE_OFFSETS_MINUTES } from '../src/service-dates.js';

/** A client whose requests are recorded and never answered (the recorded fetch fails). */
function recordingClient() {
  const urls: URL[] = [];
  const client = new NotificationClient({
    serviceUrl: 'http://127.0.0.1:9',
    getAccessToken: () => 'token',
    fetch: async (input) => {
      urls.push(new URL(String(input)));
      throw new TypeError('not sent');
    },
  });
  return { client, urls };
}

const SERVICE_FORMS = [
  '2026-11-22T09:30:00Z',
  '2026-11-22T09:30:00UTC',
  '2026-11-22T09:30:00 UTC',
  '2026-11-22T09:30:00IST',
  '2026-11-22T09:30:00PST',
  '2026-11-22T15:00:00+05:30',
  '2026-11-22T15:00:00+0530',
  '2026-11-22T01:00:00-08:00',
  '2026-11-22T01:00:00+15:00',
  '2026-11-22T01:00:00+23:59',
  '2028-02-29T00:00:00Z',
  '2026-12-31T23:59:59GMT',
];
const NOT_DATES = [
  '2026-11-22T09:30:00',
  '2026-11-22 09:30:00UTC',
  '2026-11-22T09:30:00XYZ',
  '2026-11-22T09:30:00utc',
  '2026-11-22T09:30:00+24:00',
  '2026-11-22T09:30:00+05:60',
  '2026-02-29T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-11-22T24:00:00Z',
  '2026-11-22T09:60:00Z',
  '2026-11-22T09:30:60Z',
  '2026-11-22',
  'yesterday',
];

describe('dates of the notification operations', () => {
  test('when the library and the service read zone abbreviations, then they know the same ones with the same offsets', () => {
    expect(ZONE_OFFSETS_MINUTES).toEqual(SERVICE_ZONES);
  });

  test.each(SERVICE_FORMS)(
    'when %s (a form the service accepts) is given, then the library names the same instant and sends it unchanged',
    (text) => {
      expect(parseClientLibraryDate(text)).toBeDefined();
      expect(parseServiceDate(text)?.instant).toEqual(parseClientLibraryDate(text));
      expect(toServiceDate(text, 'start')?.text).toBe(text);
    },
  );

  test.each(NOT_DATES)('when %s (refused by the service) is given, then the library refuses it too', (text) => {
    expect(parseClientLibraryDate(text)).toBeUndefined();
    expect(toServiceDate(text, 'start')).toBeUndefined();
  });

  test('when a toISOString() text or a Date is given, then the service is sent its UTC form, the range widened to whole seconds', () => {
    const date = new Date('2026-11-22T09:30:00.250Z');
    expect(toServiceDate(date.toISOString(), 'start')?.text).toBe('2026-11-22T09:30:00Z');
    expect(toServiceDate(date.toISOString(), 'end')?.text).toBe('2026-11-22T09:30:01Z');
    expect(toServiceDate(date, 'start')?.text).toBe('2026-11-22T09:30:00Z');
    expect(toServiceDate(date, 'end')?.text).toBe('2026-11-22T09:30:01Z');
    expect(toServiceDate(new Date('2026-11-22T09:30:00.000Z'), 'end')?.text).toBe('2026-11-22T09:30:00Z');
    expect(toServiceDate('2026-11-22T15:00:00.5+05:30', 'start')?.text).toBe('2026-11-22T09:30:00Z');
    // What is sent is a form the service reads back as the same second.
    expect(parseClientLibraryDate(toServiceDate(date, 'start')!.text)).toEqual(new Date('2026-11-22T09:30:00Z'));
  });

  test('when GetNotifications gets a Date and a toISOString() text, then the request carries the service forms', async () => {
    const { client, urls } = recordingClient();
    await client.getNotifications(0, '', 1, new Date('2026-11-22T09:30:00.999Z'), '2026-11-23T09:30:00.001Z').catch(() => undefined);
    expect(urls[0].searchParams.get('startDate')).toBe('2026-11-22T09:30:00Z');
    expect(urls[0].searchParams.get('endDate')).toBe('2026-11-23T09:30:01Z');
    await client
      .getNotificationHistory(0, '', 1, '2026-11-22T15:00:00+05:30', new Date(Date.UTC(2026, 10, 23)), '', '', '', '')
      .catch(() => undefined);
    expect(urls[1].searchParams.get('startDate')).toBe('2026-11-22T15:00:00+05:30');
    expect(urls[1].searchParams.get('endDate')).toBe('2026-11-23T00:00:00Z');
  });

  test.each([
    ['an invalid Date', new Date('nope'), ''],
    ['a text the service refuses', '2026-11-22T09:30:00XYZ', ''],
    ['an end before the start', '2026-11-22T09:30:00Z', new Date('2026-11-22T09:29:59Z')],
    ['a number', 1764000000000, ''],
  ])(
    'when a date is %s, then the operation fails with SvcIdentityError (refused, code 4) before any request',
    async (_case, start, end) => {
      const { client, urls } = recordingClient();
      const error = await client.getNotifications(0, '', 1, start as string, end as string).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SvcIdentityError);
      expect(error).toMatchObject({ kind: 'refused', code: 4, operation: 'GetNotifications' });
      expect(urls).toEqual([]);
    },
  );
});
