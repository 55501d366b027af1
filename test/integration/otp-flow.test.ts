import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createOtpsRepository } from '../../core/otp/otps.repository.js';
import { userModel } from '../../core/users/users.repository.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson, readOutbox } from '../support/otp-helpers.js';
import { queueSettled } from '../support/queue-state.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';

const stamp = expect.stringMatching(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);

describe('OTP generation, delivery to the outbox and validation', () => {
  let service: TestService;
  let worker: RunningWorker;
  let token: string;
  let otherToken: string;
  const mobile = '+15550001111';
  const email = 'alice@example.com';

  beforeAll(async () => {
    // Generous per-user budget: this file asks one user for many OTPs (limits have their own test).
    service = await startTestService('otpflow', { RATE_LIMIT_OTP_PER_USER: '1000' });
    const template = await adminRequest(service, 'POST', '/admin/templates', {
      name: 'branded_email',
      channel: 'EMAIL',
      subject: 'Your __APP_NAME__ code',
      text: 'Hello __NAME__, your code is __SVC_OTP__.',
      html: '<p>Hello __NAME__,</p><p>your code is <b>__SVC_OTP__</b>.</p>',
    });
    expect(template.status).toBe(201);
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    otherToken = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'alice', mobileNumber: mobile, emailId: email });
    await insertUser(service.ctx.mongo, { userId: 'nomail', mobileNumber: '+15550002222' });
    await insertUser(service.ctx.mongo, { userId: 'gone', mobileNumber: '+15550003333', status: 'DELETED' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const generate = (body: unknown, headers: Record<string, string> = {}, bearer = token) =>
    postJson(`${service.url}/v1/svc-otp`, bearer, body, headers);
  const validate = (otpUuid: string, otp: string, bearer = token) =>
    postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, bearer, { otp });
  const codeIn = (text: string) => /code is ([^ .]+)\./.exec(text)?.[1] ?? '';

  async function newOtp(overrides: Record<string, unknown> = {}): Promise<{ otpUuid: string; code: string }> {
    const res = await generate(otpBody('alice', overrides));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const message = await outboxMessageFor(service, mobile, otpUuid);
    return { otpUuid, code: codeIn(message.text) };
  }

  test('when an OTP is generated for SMS and e-mail, then both messages reach the outbox with the code and macros rendered', async () => {
    const res = await generate(
      otpBody('alice', {
        dispatchOptions: { SMS: 'otp_sms', EMAIL: 'branded_email' },
        dynamicMacros: { __APP_NAME__: 'Acme', __NAME__: 'Alice <b>{{x}}</b>' },
        msgId: 'm-1',
      }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { otpUuid: string };
    expect(Object.keys(body)).toEqual(['otpUuid']);
    expect(body.otpUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const sms = await outboxMessageFor(service, mobile, body.otpUuid);
    const code = codeIn(sms.text);
    expect(code).toMatch(/^[0-9]{6}$/);
    const mail = await outboxMessageFor(service, email, body.otpUuid);
    expect(mail.channel).toBe('EMAIL');
    expect(mail.text).toContain(code);
    expect(mail.html).toContain(code);
    expect(mail.subject).toBe('Your Acme code');
    expect(mail.text).toBe(`Hello Alice <b>{{x}}</b>, your code is ${code}.`);
    expect(mail.html).toBe(`<p>Hello Alice &lt;b&gt;{{x}}&lt;/b&gt;,</p><p>your code is <b>${code}</b>.</p>`);
    const status = await fetch(`${service.url}/v1/svc-otp/${body.otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    expect(status.status).toBe(200);
    const state = (await status.json()) as Record<string, unknown>;
    expect(state).toMatchObject({ otpUuid: body.otpUuid, status: 'ACTIVE', attemptsLeft: 3, msgId: 'm-1' });
    expect(JSON.stringify(state)).not.toContain(code);
    await eventually(async () => {
      const s = (await (
        await fetch(`${service.url}/v1/svc-otp/${body.otpUuid}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as { deliveries: { state: string }[] };
      return s.deliveries.length === 2 && s.deliveries.every((d) => d.state === 'SENT') ? s : undefined;
    });
  });

  test('when the right code is validated with generateJwt, then 200 SUCCESS with a JWT verifiable at the JWKS', async () => {
    const { otpUuid, code } = await newOtp({
      generateJwt: true,
      otpSpecs: [
        { length: 4, charSets: 'U' },
        { length: 4, charSets: 'N' },
      ],
    });
    expect(code).toMatch(/^[A-Z]{4}[0-9]{4}$/);
    const res = await validate(otpUuid, code);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { otpUuid: string; status: string; jwt: string };
    expect(body).toEqual({ otpUuid, status: 'SUCCESS', jwt: expect.any(String) });
    const jwks = createRemoteJWKSet(new URL(`${service.url}/svc/authserver/jwks`));
    const { payload } = await jwtVerify(body.jwt, jwks);
    // `sub` is the bare userId, which another enterprise may have too: the enterprise goes beside it, as in every token.
    expect(payload).toMatchObject({ sub: 'alice', enterprise_id: 'default', jti: otpUuid });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBeLessThanOrEqual(300);
  });

  test('when the right code is validated without generateJwt, then no JWT, and a second use is 409 USED', async () => {
    const { otpUuid, code } = await newOtp();
    const first = await validate(otpUuid, code);
    expect(await first.json()).toEqual({ otpUuid, status: 'SUCCESS' });
    const again = await validate(otpUuid, code);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      timestamp: stamp,
      status: 'USED',
      error: 'Conflict',
      message: 'OTP already used',
      path: `/v1/svc-otp/${otpUuid}/validate`,
      otpUuid,
    });
  });

  test('when a wrong code is sent, then 422 FAILED with attempts left, and after the last one 423 LOCKED even for the right code', async () => {
    const { otpUuid, code } = await newOtp({ attempts: 2 });
    const wrong = code === '000000' ? '111111' : '000000';
    const first = await validate(otpUuid, wrong);
    expect(first.status).toBe(422);
    expect(await first.json()).toEqual({
      timestamp: stamp,
      status: 'FAILED',
      error: 'Invalid data.',
      message: 'Invalid OTP',
      path: `/v1/svc-otp/${otpUuid}/validate`,
      otpUuid,
      attemptsLeft: 1,
    });
    const second = await validate(otpUuid, wrong);
    expect(((await second.json()) as { attemptsLeft: number }).attemptsLeft).toBe(0);
    const right = await validate(otpUuid, code);
    expect(right.status).toBe(423);
    expect(await right.json()).toEqual({
      timestamp: stamp,
      status: 'LOCKED',
      error: 'Locked',
      message: 'OTP locked: no attempts left',
      path: `/v1/svc-otp/${otpUuid}/validate`,
      otpUuid,
    });
  });

  test('when the OTP has expired, then 410 EXPIRED even for the right code', async () => {
    const { otpUuid, code } = await newOtp();
    await service.ctx.mongo
      .collection('otps')
      .updateOne({ _id: otpUuid as unknown as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await validate(otpUuid, code);
    expect(res.status).toBe(410);
    expect(await res.json()).toEqual({
      timestamp: stamp,
      status: 'EXPIRED',
      error: 'Gone',
      message: 'OTP expired',
      path: `/v1/svc-otp/${otpUuid}/validate`,
      otpUuid,
    });
  });

  test('when 50 wrong guesses race against attempts 3, then exactly 3 are checked and the rest are locked out', async () => {
    const { otpUuid, code } = await newOtp({ attempts: 3 });
    const wrong = code === '000000' ? '111111' : '000000';
    const answers = await Promise.all(Array.from({ length: 50 }, () => validate(otpUuid, wrong)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 422)).toHaveLength(3);
    expect(statuses.filter((s) => s === 423)).toHaveLength(47);
    expect((await validate(otpUuid, code)).status).toBe(423);
  });

  test('when a template holds a run of underscores or a macro right after an underscore, then the request check and the message agree', async () => {
    const addSms = (name: string, text: string) => adminRequest(service, 'POST', '/admin/templates', { name, channel: 'SMS', text });
    expect((await addSms('separator_sms', 'Code __SVC_OTP__\n__________\nAcme')).status).toBe(201);
    expect((await addSms('order_sms', 'Code __SVC_OTP__ for order ___ORDER__')).status).toBe(201);

    // A separator line is no macro: nothing to supply, and it reaches the phone as written.
    const separator = await generate(otpBody('alice', { dispatchOptions: { SMS: 'separator_sms' } }));
    expect(separator.status).toBe(200);
    const { otpUuid: separatorUuid } = (await separator.json()) as { otpUuid: string };
    expect((await outboxMessageFor(service, mobile, separatorUuid)).text).toMatch(/^Code [0-9]{6}\n__________\nAcme$/);

    // `___ORDER__` is a plain underscore, then __ORDER__: the value asked for is the one rendered.
    const missing = await generate(otpBody('alice', { dispatchOptions: { SMS: 'order_sms' } }));
    expect(await missing.json()).toMatchObject({ status: 422, message: 'dynamicMacros: missing values for __ORDER__' });
    const notAMacro = await generate(otpBody('alice', { dispatchOptions: { SMS: 'order_sms' }, dynamicMacros: { ___ORDER__: '42' } }));
    expect(notAMacro.status).toBe(422);
    const order = await generate(otpBody('alice', { dispatchOptions: { SMS: 'order_sms' }, dynamicMacros: { __ORDER__: '42' } }));
    expect(order.status).toBe(200);
    const { otpUuid: orderUuid } = (await order.json()) as { otpUuid: string };
    expect((await outboxMessageFor(service, mobile, orderUuid)).text).toMatch(/^Code [0-9]{6} for order _42$/);
  });

  test('when the right code races a wrong guess for the last attempts, then the right code still succeeds', async () => {
    // Both checks hold one of the two attempts; the wrong one used to lock the OTP before the right
    // one was marked used, which then answered 423. The interleaving is not forced, so 50 OTPs
    // race at once (the old code lost one to seven races in 30).
    const otps = await Promise.all(Array.from({ length: 50 }, () => newOtp({ attempts: 2 })));
    const outcomes = await Promise.all(
      otps.map(async ({ otpUuid, code }) => {
        const wrong = code === '000000' ? '111111' : '000000';
        const [right, guess] = await Promise.all([validate(otpUuid, code), validate(otpUuid, wrong)]);
        return `right=${right.status} wrong=${guess.status}`;
      }),
    );
    expect(outcomes.filter((o) => !o.startsWith('right=200'))).toEqual([]);
    // The wrong guess is either checked (422) or comes after the success (409), never a lock.
    expect(outcomes.filter((o) => !/wrong=(422|409)$/.test(o))).toEqual([]);
  });

  test('when a wrong guess takes the last attempt and locks the OTP after the right code took its own, then the right code is still marked used, once', async () => {
    // The interleaving the race above can hit, step by step: each check holds an attempt, the
    // wrong one locks, then the right one marks the OTP used.
    const { otpUuid } = await newOtp({ attempts: 2 });
    const otps = createOtpsRepository(service.ctx.mongo);
    const stored = await service.ctx.mongo.collection('otps').findOne({ _id: otpUuid as unknown as never });
    const clientId = String(stored?.clientId);
    expect(await otps.takeAttempt(otpUuid, clientId, new Date())).toBeDefined();
    expect(await otps.takeAttempt(otpUuid, clientId, new Date())).toBeDefined();
    await otps.lockIfExhausted(otpUuid);
    expect(await otps.markUsed(otpUuid, new Date())).toBe(true);
    expect(await otps.markUsed(otpUuid, new Date())).toBe(false);
    expect(
      (
        (await (await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          status: string;
        }
      ).status,
    ).toBe('USED');
  });

  test('when the right code is sent 10 times at once, then exactly one succeeds', async () => {
    const { otpUuid, code } = await newOtp({ attempts: 20 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => validate(otpUuid, code)));
    // The bodies go with the statuses, so a failure says what the other answers were.
    const outcomes = await Promise.all(answers.map(async (r) => `${r.status} ${await r.text()}`));
    expect(outcomes.filter((o) => o.startsWith('200 '))).toHaveLength(1);
    // Any other answer comes with the service's warnings and errors, which say why (a 503 once came
    // from a loaded CI machine).
    const unexpected = outcomes.filter((o) => !o.startsWith('200 ') && !o.startsWith('409 '));
    if (unexpected.length > 0)
      unexpected.push(
        ...service
          .logLines()
          .filter((line) => Number(line.level) >= 40)
          .map((line) => JSON.stringify(line)),
      );
    expect(unexpected).toEqual([]);
  });

  test('when another client asks about an OTP, or the uuid is unknown, then 404', async () => {
    const { otpUuid, code } = await newOtp();
    const foreign = await validate(otpUuid, code, otherToken);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({
      timestamp: stamp,
      status: 404,
      error: 'Not Found',
      message: 'OTP not found',
      path: `/v1/svc-otp/${otpUuid}/validate`,
    });
    expect((await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${otherToken}` } })).status).toBe(404);
    expect((await validate('00000000-0000-4000-8000-000000000000', code)).status).toBe(404);
    expect((await validate('not-a-uuid', code)).status).toBe(404);
  });

  test('when the same Idempotency-Key and body are retried, then the same otpUuid and a single message', async () => {
    const body = otpBody('alice', { msgId: 'idem-1' });
    const first = (await (await generate(body, { 'Idempotency-Key': 'k-123' })).json()) as { otpUuid: string };
    await outboxMessageFor(service, mobile, first.otpUuid);
    const second = await generate(body, { 'Idempotency-Key': 'k-123' });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(first);
    // Whatever the retry queued has run by now.
    await queueSettled(service.ctx.queues.dispatch);
    expect((await readOutbox(service, mobile)).filter((m) => m.otpUuid === first.otpUuid)).toHaveLength(1);
    const changed = await generate({ ...body, attempts: 5 }, { 'Idempotency-Key': 'k-123' });
    expect(changed.status).toBe(422);
    expect(await changed.json()).toEqual({
      timestamp: stamp,
      status: 422,
      error: 'Invalid data.',
      message: 'Idempotency-Key was already used with a different request',
      path: '/v1/svc-otp',
    });
  });

  describe('refused requests', () => {
    const refused = (status: number, error: string, message: string) => ({ timestamp: stamp, status, error, message, path: '/v1/svc-otp' });

    test('when the body is not JSON, then 400 Malformed request body', async () => {
      const res = await generate('{"userId": "alice",');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(refused(400, 'Bad Request', 'Malformed request body'));
    });

    test('when the body is empty (Content-Length: 0), then 400 Malformed request body, not a missing field', async () => {
      const res = await generate('');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(refused(400, 'Bad Request', 'Malformed request body'));
    });

    test('when a mandatory field is missing or null, then 400 naming it', async () => {
      const res = await generate({ ...otpBody('alice'), dynamicMacros: null });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(refused(400, 'Bad Request', 'Missing mandatory field: dynamicMacros'));
    });

    test('when the content type is not JSON, then 415', async () => {
      const res = await fetch(`${service.url}/v1/svc-otp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual(refused(415, 'Unsupported Media Type', "Content type 'text/plain' not supported"));
    });

    test('when the template does not exist, then 422 naming it', async () => {
      const res = await generate(otpBody('alice', { dispatchOptions: { SMS: 'nope' } }));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        refused(422, 'Invalid data.', "dispatchOptions.SMS: template 'nope' does not exist for channel SMS"),
      );
    });

    test('when an e-mail template is named for SMS, then 422', async () => {
      const res = await generate(otpBody('alice', { dispatchOptions: { SMS: 'otp_email' } }));
      expect(await res.json()).toEqual(
        refused(422, 'Invalid data.', "dispatchOptions.SMS: template 'otp_email' does not exist for channel SMS"),
      );
    });

    test('when a macro the template uses has no value, then 422 naming it', async () => {
      const res = await generate(
        otpBody('alice', { dispatchOptions: { EMAIL: 'branded_email' }, dynamicMacros: { __APP_NAME__: 'Acme' } }),
      );
      expect(await res.json()).toEqual(refused(422, 'Invalid data.', 'dynamicMacros: missing values for __NAME__'));
    });

    test('when dispatchOptions names an unknown channel, then 422', async () => {
      const res = await generate(otpBody('alice', { dispatchOptions: { FAX: 'otp_sms' } }));
      expect(await res.json()).toEqual(refused(422, 'Invalid data.', 'dispatchOptions.FAX is not allowed (allowed: SMS, EMAIL)'));
    });

    test('when the attempts are out of range, then 422', async () => {
      const res = await generate(otpBody('alice', { attempts: 101 }));
      expect(await res.json()).toEqual(refused(422, 'Invalid data.', 'attempts must be between 1 and 100'));
    });

    test('when the user is not enrolled or is deleted, then 404 User not found', async () => {
      for (const userId of ['nobody', 'gone']) {
        const res = await generate(otpBody(userId));
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual(refused(404, 'Not Found', 'User not found'));
      }
    });

    test('when the user has no address for the channel, then 422', async () => {
      const res = await generate(otpBody('nomail', { dispatchOptions: { EMAIL: 'otp_email' } }));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(refused(422, 'Invalid data.', 'dispatchOptions.EMAIL: user has no emailId registered'));
    });

    test('when there is no token, then 401 unauthorized', async () => {
      const res = await fetch(`${service.url}/v1/svc-otp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(otpBody('alice')),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
      });
    });

    test('when the token lacks the otp scope, then 403 insufficient_scope', async () => {
      const usersOnly = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
      const res = await generate(otpBody('alice'), {}, usersOnly);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe('insufficient_scope');
    });
  });

  test('when a user is deleted after an OTP was asked for, then new OTPs are refused', async () => {
    await insertUser(service.ctx.mongo, { userId: 'leaver', mobileNumber: '+15550004444' });
    expect((await generate(otpBody('leaver'))).status).toBe(200);
    await (await userModel(service.ctx.mongo)).updateOne({ userId: 'leaver' }, { $set: { status: 'DELETED' } });
    expect((await generate(otpBody('leaver'))).status).toBe(404);
  });
});
