import { findFreePort } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody } from '../support/otp-helpers.js';
import { startKeepAliveLoad } from '../support/keep-alive-load.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

describe('API process: graceful shutdown under keep-alive load', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('apishutdown', { RATE_LIMIT_OTP_PER_USER: '100000', RATE_LIMIT_OTP_PER_CLIENT: '100000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'drain', mobileNumber: '+15550001234' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when SIGTERM arrives with requests in flight on keep-alive connections, then every request read is answered, answers say Connection: close, and the process exits 0', async () => {
    const port = await findFreePort();
    const api = spawnProcessEntry('api/main.js', { ...service.env, PORT: String(port) });
    await waitForOutput(api, 'API listening');
    const load = startKeepAliveLoad({
      url: `http://127.0.0.1:${port}/v1/svc-otp`,
      lanes: 16,
      headers: { authorization: `Bearer ${token}` },
      body: () => otpBody('drain'),
    });
    await eventually(async () => (load.outcomes.filter((o) => o.status === 200).length >= 50 ? true : undefined), 30000, 5);
    const signalledAt = Date.now();
    api.child.kill('SIGTERM');
    const exit = await api.exited;
    load.stop();
    await load.finished;

    expect(exit).toEqual({ code: 0, signal: null });
    const writtenBefore = load.outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < signalledAt);
    // Every request on the wire when the signal came was read and answered, none cut.
    expect(writtenBefore.filter((o) => o.status !== 200)).toEqual([]);
    // The lanes busy at the signal were told to go on their last answer.
    expect(load.outcomes.filter((o) => o.connectionClose && o.status === 200).length).toBeGreaterThan(0);
    // Afterwards the only failures are connections refused (nothing listens) or closed before a
    // request on them was read; never an answer of 5xx.
    for (const outcome of load.outcomes) {
      if (outcome.status !== undefined) expect(outcome.status).toBe(200);
      else expect(['ECONNREFUSED', 'ECONNRESET', 'socket hang up']).toContain(outcome.error);
    }
    expect(api.output()).not.toContain('shutdown step failed');
  }, 90000);
});
