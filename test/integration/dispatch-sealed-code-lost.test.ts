import { randomBytes } from 'node:crypto';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { otpDeliveryId } from '../../core/deliveries/delivery.types.js';
import { requeueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * A waiting message keeps its code sealed with OTP_ENCRYPTION_KEY. When the key that sealed it is
 * dropped before `npm run reseal` reached the row, the message cannot be sent: its row must say
 * why in words an operator acts on, not the cipher's own error.
 */
describe('a waiting message whose sealed code opens with no configured key', () => {
  let service: TestService;
  let token: string;
  beforeAll(async () => {
    service = await startTestService('dispatchsealedlost');
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the worker takes it, then it ends FAILED saying its key was dropped before the reseal, and nothing is sent', async () => {
    await insertUser(service.ctx.mongo, { userId: 'sealedlost', mobileNumber: '+15550008201' });
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sealedlost'));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const id = otpDeliveryId(otpUuid, 'SMS');
    // No worker ran: the job still waits. It goes again without its sealed copy, so the worker reads
    // the row, whose code only a dropped key opens.
    await (await service.ctx.queues.dispatch.getJob(id))?.remove();
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: id as never }, { $set: { secretMacros: encryptSecret('{"__OTP__":"424242"}', randomBytes(32), id) } });
    expect(await requeueDispatch(service.ctx.queues.dispatch, id)).toBe(true);

    const worker = await startDispatchWorker(service.config, memoryLogger().logger);
    try {
      const row = await eventually(async () => {
        const found = await service.ctx.mongo.collection('deliveries').findOne({ _id: id as never });
        return found?.state === 'FAILED' ? found : undefined;
      }, 15000);
      expect(row.lastError).toBe(
        'sealed content opens with no configured key: its OTP_ENCRYPTION_KEY was dropped before npm run reseal reached it',
      );
      expect(await service.ctx.mongo.collection('outbox').countDocuments({ otpUuid })).toBe(0);
    } finally {
      await worker.shutdown();
    }
  });
});
