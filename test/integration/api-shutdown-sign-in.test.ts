import { createHash, randomBytes } from 'node:crypto';
import { findFreePort } from '../../scripts/local-services.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { csrfOf, FormWalker } from '../support/sign-in-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

const REDIRECT = 'https://app.example/callback';
// The user-id step answers after the drain window has ended: its code is generated while the
// process is already closing, right before the stores would be closed.
const DRAIN_WINDOW_MS = 1000;
const STEP_FLOOR_MS = 2500;

describe('API shutdown during a sign-in step', () => {
  let service: TestService;
  let clientId: string;

  beforeAll(async () => {
    service = await startTestService('shutdownsignin');
    clientId = (await registerClient(service.services.clients, { name: 'Acme Bank', scopes: [], redirectUris: [REDIRECT] })).client
      .clientId;
    await insertUser(service.ctx.mongo, { userId: 'leaving', mobileNumber: '+15550400001' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the API is stopped while a user-id step is answered, then the code is generated and attached before the stores close', async () => {
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = spawnProcessEntry('api/main.js', {
      ...service.env,
      PORT: String(port),
      PUBLIC_URL: url,
      SHUTDOWN_DRAIN_WINDOW_MS: String(DRAIN_WINDOW_MS),
      LOGIN_USER_STEP_FLOOR_MS: String(STEP_FLOOR_MS),
    });
    try {
      await waitForOutput(proc, 'API listening', 60000);
      const walker = new FormWalker(url);
      const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
      const query = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: REDIRECT,
        state: 'st',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const first = await walker.page(`${url}/svc/authserver/oauth/authorize?${query.toString()}`);
      proc.child.kill('SIGTERM');
      await waitForOutput(proc, 'shutting down');
      // Sent in the drain window, which still serves new requests; answered after it ended (to
      // the code page, which this browser would load from the next process).
      const answer = await walker.request(first.url, {
        form: { csrf: csrfOf(first.html), step: 'user', userId: 'leaving' },
        follow: false,
      });
      expect(answer).toEqual({ redirectedTo: first.url });
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      const state = await service.ctx.mongo.collection('login_states').findOne({ userId: 'leaving' });
      expect({ otpUuid: typeof state?.otpUuid, logged: proc.output().includes('login code could not be sent') }).toEqual({
        otpUuid: 'string',
        logged: false,
      });
    } finally {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    }
  }, 90000);
});
