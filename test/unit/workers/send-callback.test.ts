import { jest } from '@jest/globals';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { CallbackDelivery } from '../../../core/notifications/callback-delivery.service.js';
import { CallbackCircuitOpenError } from '../../../core/notifications/callback-circuits.js';
import { callbackRetryWindowMs, type NotificationJobData } from '../../../core/platform/queues/notification.queue.js';
import { createSendCallbackProcessor } from '../../../workers/notifications/send-callback.processor.js';

const BASE_MS = 1000;
const uuid = '6f1c0d57-2f6a-4b8e-9a53-2d1f4c6a9b10';

function held(queuedAt: number, retryAt: number) {
  const giveUp = jest.fn(async () => {});
  const delivery = {
    deliver: async () => {
      throw new CallbackCircuitOpenError('bank.example', retryAt);
    },
    giveUp,
  } as unknown as CallbackDelivery;
  const moveToDelayed = jest.fn(async () => {});
  const job = { data: { notificationUuid: uuid }, timestamp: queuedAt, attemptsMade: 0, opts: { attempts: 36 }, moveToDelayed };
  const run = () => createSendCallbackProcessor(delivery, BASE_MS)(job as unknown as Job<NotificationJobData>, 'token');
  return { run, giveUp, moveToDelayed };
}

describe('send-callback processor: callbacks held back by an open circuit', () => {
  test('when the receiver is held back within the retry window, then the callback waits until the cool-down ends without using up an attempt', async () => {
    const retryAt = Date.now() + 30_000;
    const { run, giveUp, moveToDelayed } = held(Date.now() - 60_000, retryAt);
    await expect(run()).rejects.toBeInstanceOf(DelayedError);
    const [[at]] = moveToDelayed.mock.calls as unknown as [[number, string]];
    expect(at).toBeGreaterThanOrEqual(retryAt);
    expect(at).toBeLessThan(retryAt + 1000);
    expect(giveUp).not.toHaveBeenCalled();
  });

  test('when waiting would take it past the day its attempts would have taken, then it is FAILED instead of waiting on', async () => {
    const queuedAt = Date.now() - callbackRetryWindowMs(BASE_MS);
    const { run, giveUp, moveToDelayed } = held(queuedAt, Date.now() + 30_000);
    await expect(run()).rejects.toBeInstanceOf(UnrecoverableError);
    expect(giveUp).toHaveBeenCalledWith(uuid);
    expect(moveToDelayed).not.toHaveBeenCalled();
  });

  test('when the retry window is computed, then it is the sum of the backoffs of every attempt: about a day', () => {
    const hours = callbackRetryWindowMs(BASE_MS) / 3_600_000;
    expect(hours).toBeGreaterThan(23);
    expect(hours).toBeLessThan(25);
  });
});
