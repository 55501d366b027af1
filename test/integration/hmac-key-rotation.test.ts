import { randomBytes } from 'node:crypto';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const hmacA = randomBytes(32).toString('base64url');
const hmacB = randomBytes(32).toString('base64url');
const mobile = '+15550004444';
const codeIn = (text: string) => /([0-9]{6})/.exec(text)?.[1] ?? '';

/** A service on the shared store with these HMAC settings, a dispatch worker beside it, and what `use` does with them. */
async function withService(store: Record<string, string>, overrides: Record<string, string>, use: (service: TestService) => Promise<void>) {
  const service = await startTestService('hmacrotation', { ...store, ...overrides });
  const worker = await startDispatchWorker(service.config, memoryLogger().logger);
  try {
    await use(service);
  } finally {
    await worker.shutdown();
    await service.close();
  }
}

describe('changing OTP_HMAC_KEY', () => {
  test('when the service restarts with a new HMAC key and the old one as previous, then a code issued before verifies, a code issued after verifies, and without the old key only the new one does', async () => {
    const encryption = randomBytes(32).toString('hex');
    let store: Record<string, string> = {};
    let token = '';
    const issue = async (service: TestService) => {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('alice'));
      expect(res.status).toBe(200);
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      return { otpUuid, code: codeIn((await outboxMessageFor(service, mobile, otpUuid)).text) };
    };
    const validate = (service: TestService, otp: { otpUuid: string; code: string }) =>
      postJson(`${service.url}/v1/svc-otp/${otp.otpUuid}/validate`, token, { otp: otp.code });
    let before = { otpUuid: '', code: '' };
    let beforeUnused = { otpUuid: '', code: '' };
    await withService({}, { OTP_HMAC_KEY: hmacA, OTP_ENCRYPTION_KEY: encryption }, async (service) => {
      store = { MONGODB_URI: service.env.MONGODB_URI, QUEUE_PREFIX: service.env.QUEUE_PREFIX, OTP_ENCRYPTION_KEY: encryption };
      token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
      await insertUser(service.ctx.mongo, { userId: 'alice', mobileNumber: mobile });
      before = await issue(service);
      beforeUnused = await issue(service);
    });
    let after = { otpUuid: '', code: '' };
    await withService(store, { OTP_HMAC_KEY: hmacB, OTP_HMAC_KEYS_PREVIOUS: hmacA }, async (service) => {
      expect((await validate(service, before)).status).toBe(200);
      after = await issue(service);
    });
    await withService(store, { OTP_HMAC_KEY: hmacB }, async (service) => {
      expect((await validate(service, after)).status).toBe(200);
      // Digested with the dropped key: no longer verifies.
      expect((await validate(service, beforeUnused)).status).toBe(422);
    });
  }, 90_000);
});
