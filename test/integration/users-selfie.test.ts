import { createHash, randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startFaceAnalyzerStub } from '../support/face-analyzer-stub.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, userBody } from '../support/users-helpers.js';

/** A small real photo-like image: a gradient with noise, so encoders have something to do. */
async function image(width: number, height: number, format: 'jpeg' | 'png' | 'webp'): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i += 1) raw[i] = (i * 7 + (i % 251)) & 0xff;
  const pipeline = sharp(raw, { raw: { width, height, channels: 3 } });
  return (format === 'jpeg' ? pipeline.jpeg() : format === 'png' ? pipeline.png() : pipeline.webp()).toBuffer();
}

const failed = (code: string) => errorBody(400, 'Bad Request', `Failed.[${code}]`, '/v1/users');

describe('selfieImage', () => {
  let service: TestService;
  let analyzer: Awaited<ReturnType<typeof startFaceAnalyzerStub>>;
  let token: string;
  let jpeg: Buffer;
  let n = 0;
  const nextId = () => `selfie${++n}`;

  beforeAll(async () => {
    analyzer = await startFaceAnalyzerStub();
    service = await startTestService('usersselfie', { FACE_ANALYZER_URL: analyzer.url, FACE_ANALYZER_TIMEOUT_MS: '300' });
    await createGroups(service, ['retail']);
    token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    jpeg = await image(400, 300, 'jpeg');
  });
  beforeEach(() => {
    analyzer.setMode('compliant');
    analyzer.requests.length = 0;
  });
  afterAll(async () => {
    await service.close();
    await analyzer.close();
  });

  const enroll = (body: unknown) => sendJson(`${service.url}/v1/users`, 'POST', token, body);
  const getUser = async (userId: string) =>
    (await (await fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<
      string,
      unknown
    >;

  test('when a compliant JPEG is sent, then 201 and the biometric fields hold the SHA-256 of the decoded image', async () => {
    const userId = nextId();
    const res = await enroll(userBody(userId, { selfieImage: jpeg.toString('base64') }));
    expect(res.status).toBe(201);
    expect(await getUser(userId)).toMatchObject({
      server_bio_template_hash: createHash('sha256').update(jpeg).digest('hex'),
      server_bio_template_hash_created_ts: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      server_bio_template_source: 'SELFIE',
    });
    expect(analyzer.requests).toEqual([{ image: jpeg.toString('base64'), format: 'jpeg' }]);
  });

  test('when a compliant PNG is sent in portrait 240x320, then 201', async () => {
    const png = await image(240, 320, 'png');
    const res = await enroll(userBody(nextId(), { selfieImage: png.toString('base64') }));
    expect(res.status).toBe(201);
    expect(analyzer.requests).toEqual([{ image: png.toString('base64'), format: 'png' }]);
  });

  test('when the Base64 is wrapped at 76 columns, then it is still decoded', async () => {
    const wrapped = jpeg.toString('base64').replace(/(.{76})/g, '$1\r\n');
    expect((await enroll(userBody(nextId(), { selfieImage: wrapped }))).status).toBe(201);
  });

  test('when the value is not Base64, then 400 Failed.[IMAGE_DECODE_FAILED] and the analyzer is not called', async () => {
    const res = await enroll(userBody(nextId(), { selfieImage: 'not base64 at all!' }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(failed('IMAGE_DECODE_FAILED'));
    expect(analyzer.requests).toEqual([]);
  });

  test('when the bytes are no image, then 400 Failed.[IMAGE_DECODE_FAILED]', async () => {
    const res = await enroll(userBody(nextId(), { selfieImage: randomBytes(3000).toString('base64') }));
    expect(await res.json()).toEqual(failed('IMAGE_DECODE_FAILED'));
  });

  test('when the JPEG is truncated, then 400 Failed.[IMAGE_DECODE_FAILED]', async () => {
    const res = await enroll(userBody(nextId(), { selfieImage: jpeg.subarray(0, Math.floor(jpeg.length / 2)).toString('base64') }));
    expect(await res.json()).toEqual(failed('IMAGE_DECODE_FAILED'));
  });

  test('when the image is a WebP, then 400 Failed.[UNSUPPORTED_FORMAT]', async () => {
    const res = await enroll(userBody(nextId(), { selfieImage: (await image(400, 300, 'webp')).toString('base64') }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(failed('UNSUPPORTED_FORMAT'));
  });

  test('when the decoded image is above 5 MB, then 400 Failed.[IMAGE_TOO_LARGE]', async () => {
    const res = await enroll(userBody(nextId(), { selfieImage: Buffer.alloc(5 * 1024 * 1024 + 1, 1).toString('base64') }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(failed('IMAGE_TOO_LARGE'));
  });

  test('when the image is below 320x240, then 400 Failed.[RESOLUTION_TOO_LOW]', async () => {
    for (const [w, h] of [
      [319, 240],
      [320, 239],
      [200, 150],
    ]) {
      const res = await enroll(userBody(nextId(), { selfieImage: (await image(w, h, 'png')).toString('base64') }));
      expect(await res.json()).toEqual(failed('RESOLUTION_TOO_LOW'));
    }
  });

  test('when the analyzer names a reason code, then 400 Failed.[<first code>] and no user is stored', async () => {
    analyzer.setMode('face-too-far');
    const userId = nextId();
    const res = await enroll(userBody(userId, { selfieImage: jpeg.toString('base64') }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(failed('FACE_TOO_FAR'));
    expect((await fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });

  test("when the analyzer answers 500, then 500 Failed to consume aware server's analyze API.", async () => {
    analyzer.setMode('error-500');
    const res = await enroll(userBody(nextId(), { selfieImage: jpeg.toString('base64') }));
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual(errorBody(500, 'Internal Server Error', "Failed to consume aware server's analyze API.", '/v1/users'));
  });

  test('when the analyzer is slower than FACE_ANALYZER_TIMEOUT_MS, then the same 500', async () => {
    analyzer.setMode('slow');
    const started = Date.now();
    const res = await enroll(userBody(nextId(), { selfieImage: jpeg.toString('base64') }));
    expect(res.status).toBe(500);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await res.json()).toEqual(errorBody(500, 'Internal Server Error', "Failed to consume aware server's analyze API.", '/v1/users'));
  });

  test('when the analyzer answers outside the contract, then the same 500', async () => {
    analyzer.setMode('garbage');
    const res = await enroll(userBody(nextId(), { selfieImage: jpeg.toString('base64') }));
    expect(await res.json()).toEqual(errorBody(500, 'Internal Server Error', "Failed to consume aware server's analyze API.", '/v1/users'));
  });

  test('when the user already exists, then 409 comes first and the analyzer is not called', async () => {
    const userId = nextId();
    await insertUser(service.ctx.mongo, { userId });
    const res = await enroll(userBody(userId, { selfieImage: jpeg.toString('base64') }));
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual(errorBody(409, 'Invalid data.', 'User is ACTIVE', '/v1/users', { userStatus: 'ACTIVE' }));
    expect(analyzer.requests).toEqual([]);
  });

  test('when no analyzer is configured, then the local checks alone decide and the fields are stored', async () => {
    const plain = await startTestService('usersselfie-plain');
    try {
      await createGroups(plain, ['retail']);
      const t = (await createClientWithToken(plain, { scopes: ['users'] })).accessToken;
      const ok = await sendJson(`${plain.url}/v1/users`, 'POST', t, userBody('plain1', { selfieImage: jpeg.toString('base64') }));
      expect(ok.status).toBe(201);
      const low = await sendJson(
        `${plain.url}/v1/users`,
        'POST',
        t,
        userBody('plain2', { selfieImage: (await image(100, 100, 'jpeg')).toString('base64') }),
      );
      expect(await low.json()).toEqual(failed('RESOLUTION_TOO_LOW'));
      expect(analyzer.requests).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
