import { ClientLibraryError, NotificationClient, ResultCode } from '../src/index.js';

/** A client whose every request is recorded: argument checks must fail before any request. */
function clientRecordingRequests() {
  const requests: string[] = [];
  const client = new NotificationClient({
    serviceUrl: 'http://127.0.0.1:9',
    getAccessToken: () => 'token',
    fetch: async (input) => {
      requests.push(String(input));
      throw new Error('no request was expected');
    },
  });
  const errors: ClientLibraryError[] = [];
  client.on('error', (error) => errors.push(error));
  return { client, requests, errors };
}

async function refusal(promise: Promise<unknown>): Promise<ClientLibraryError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ClientLibraryError);
  return error as ClientLibraryError;
}

describe('client library argument checks (code 4 before any request)', () => {
  test.each([
    ['recordCount below 0', -1, 1, '', ''],
    ['recordCount not an integer', 1.5, 1, '', ''],
    ['startIndex 0', 10, 0, '', ''],
    ['a date without a zone', 10, 1, '2026-11-22T09:30:00', ''],
    ['a date with a space', 10, 1, '2026-11-22 09:30:00UTC', ''],
    ['a day that does not exist', 10, 1, '2026-02-30T09:30:00UTC', ''],
    ['an hour out of range', 10, 1, '', '2026-11-22T24:00:00GMT'],
  ])(
    'when GetNotifications gets %s, then it fails with code 4 and sends nothing',
    async (_case, recordCount, startIndex, startDate, endDate) => {
      const { client, requests, errors } = clientRecordingRequests();
      const error = await refusal(client.getNotifications(recordCount, '', startIndex, startDate, endDate));
      expect(error).toMatchObject({ code: ResultCode.INVALID_ARGUMENTS, operation: 'GetNotifications', status: undefined });
      expect(errors).toEqual([error]);
      expect(requests).toEqual([]);
    },
  );

  test.each([
    ['a notification id that is not a uuid', 'abc', 'accept', undefined],
    ['an empty response', '0b9d6a0e-1c2f-4c3a-8d2e-6f1f2b3c4d5e', '', undefined],
    ['a response that is not an action value', '0b9d6a0e-1c2f-4c3a-8d2e-6f1f2b3c4d5e', 'Accept!', undefined],
    ['a matching number of three digits', '0b9d6a0e-1c2f-4c3a-8d2e-6f1f2b3c4d5e', 'accept', '123'],
  ])('when UpdateNotification gets %s, then it fails with code 4 and sends nothing', async (_case, id, response, number) => {
    const { client, requests } = clientRecordingRequests();
    const error = await refusal(client.updateNotification(id, response, number));
    expect(error).toMatchObject({ code: ResultCode.INVALID_ARGUMENTS, operation: 'UpdateNotification' });
    expect(requests).toEqual([]);
  });

  test.each([
    ['an unknown status', 'ANSWERED', '', '2026-11-22T09:30:00+05:30'],
    ['an action filter that is not an action value', 'UPDATED', 'Accept me', ''],
    ['an offset beyond 23 hours', '', '', '2026-11-22T09:30:00+24:00'],
  ])('when GetNotificationHistory gets %s, then it fails with code 4 and sends nothing', async (_case, status, action, startDate) => {
    const { client, requests } = clientRecordingRequests();
    const error = await refusal(client.getNotificationHistory(0, '', 1, startDate, '', status, action, '', ''));
    expect(error).toMatchObject({ code: ResultCode.INVALID_ARGUMENTS, operation: 'GetNotificationHistory' });
    expect(requests).toEqual([]);
  });

  test('when every argument is valid, then the request carries exactly the filters that were given', async () => {
    const { client, requests } = clientRecordingRequests();
    const error = await refusal(
      client.getNotificationHistory(25, 'acme', 3, '2026-11-22T09:30:00IST', '2026-11-23T09:30:00+05:30', 'UPDATED', 'accept', 'wire', ''),
    );
    // The recorded fetch throws, which the library reports as an unreachable service (code 39).
    expect(error).toMatchObject({ code: ResultCode.UNKNOWN_ERROR });
    const url = new URL(requests[0]);
    expect(url.pathname).toBe('/v1/me/notifications/history');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      recordCount: '25',
      enterpriseID: 'acme',
      startIndex: '3',
      startDate: '2026-11-22T09:30:00IST',
      endDate: '2026-11-23T09:30:00+05:30',
      notificationStatus: 'UPDATED',
      actionPerformed: 'accept',
      keywordSearch: 'wire',
    });
  });

  test('when only events are listened to, then a failed operation is reported without an unhandled rejection', async () => {
    const { client, errors } = clientRecordingRequests();
    const reported = new Promise((resolve) => client.once('error', resolve));
    void client.getNotifications(-1, '', 1, '', '');
    await reported;
    // One turn of the event loop: an unhandled rejection of the ignored promise would be raised by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors.map((e) => e.code)).toEqual([4]);
  });
});
