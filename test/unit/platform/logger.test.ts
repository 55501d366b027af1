import { Writable } from 'node:stream';
import { createLogger, maskEmail, maskPhone } from '../../../core/platform/logger/logger.js';
import { enrollmentJobId } from '../../../core/platform/queues/enrollment.queue.js';
import { activationDeliveryId } from '../../../core/users/activation-deliveries.service.js';

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), text: () => chunks.join('') };
}

describe('logging', () => {
  test('when secrets are logged, then they are redacted', () => {
    const { logger, text } = capture();
    logger.info(
      {
        req: { headers: { authorization: 'Bearer abc.def.ghi' } },
        body: { otp: '123456', client_secret: 's3cr3t', predefinedCode: 'ZXCV' },
      },
      'x',
    );
    const out = text();
    expect(out).not.toContain('abc.def.ghi');
    expect(out).not.toContain('123456');
    expect(out).not.toContain('s3cr3t');
    expect(out).not.toContain('ZXCV');
    expect(out).toContain('[REDACTED]');
  });

  test('when secrets sit at any depth, in headers or on a logged error, then each is redacted and the rest is kept', () => {
    const { logger, text } = capture();
    const err = Object.assign(new Error('refused'), { code: 'E_SECRET_CODE', token: 'err-token-value', status: 401 });
    logger.warn(
      {
        password: 'top-level-password',
        outer: { inner: { deeper: { accessToken: 'deep-token-value' } } },
        headers: {
          cookie: 'sid=cookie-value',
          'set-cookie': ['a=set-cookie-value'],
          'x-twilio-signature': 'sig-value',
          accept: 'text/html',
        },
        list: [{ apiKey: 'listed-api-key' }],
        err,
      },
      'x',
    );
    const out = text();
    for (const secret of [
      'top-level-password',
      'deep-token-value',
      'cookie-value',
      'set-cookie-value',
      'sig-value',
      'listed-api-key',
      'E_SECRET_CODE',
      'err-token-value',
    ])
      expect(out).not.toContain(secret);
    const line = JSON.parse(out) as { headers: { accept: string }; err: { message: string; status: number; type: string } };
    expect(line.headers.accept).toBe('text/html');
    expect(line.err).toMatchObject({ message: 'refused', status: 401, type: 'Error' });
    expect(err.token).toBe('err-token-value');
  });

  test('when addresses appear in fields or messages, then they are masked', () => {
    const { logger, text } = capture();
    logger.info({ to: '+919876543210', delivery: { emailId: 'jane.doe@example.com' } }, 'sent to jane.doe@example.com and +44 7700 900123');
    const out = text();
    expect(out).not.toContain('9876543210');
    expect(out).not.toContain('jane.doe');
    expect(out).not.toContain('7700 900123');
    expect(out).toContain('+**********10');
    expect(out).toContain('j***@example.com');
  });

  test("when an address's local part holds characters the address format allows beyond letters and digits (o'brien, a!b, c~d), then none of it is kept but its first character", () => {
    const { logger, text } = capture();
    logger.info("mail for o'brien@example.com, a!b#c@example.org and {c~d}@example.net; path /v1/users/x@example.com?next=y@example.com");
    const out = text();
    expect(out).not.toContain("o'b");
    expect(out).not.toContain('b#c');
    expect(out).not.toContain('c~d');
    expect(out).toContain('o***@example.com');
    expect(out).toContain('a***@example.org');
    expect(out).toContain('{***@example.net');
    // A path or a query keeps its shape: '/', '?', '=' and '&' end a local part.
    expect(out).toContain('/v1/users/x***@example.com?next=y***@example.com');
  });

  test('when masking, then the logged object is not changed and instances reach their serializers whole', () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk.toString());
        done();
      },
    });
    // A getter on a class instance, like ServerResponse.statusCode behind pino-http's serializer.
    class Response {
      get statusCode() {
        return 201;
      }
    }
    const logger = createLogger({ level: 'info', destination }).child(
      {},
      { serializers: { res: (res: Response) => ({ statusCode: res.statusCode }) } },
    );
    const fields = { res: new Response(), nested: [{ mobileNumber: '+919876543210' }] };
    logger.info(fields, 'x');
    const line = JSON.parse(chunks.join('')) as { res: { statusCode: number }; nested: { mobileNumber: string }[] };
    expect(line.res.statusCode).toBe(201);
    expect(line.nested[0]?.mobileNumber).toBe('+**********10');
    expect(fields.nested[0]?.mobileNumber).toBe('+919876543210');
  });

  test('when masking, then only a hint of the address is kept', () => {
    expect(maskPhone('+15551234567')).toBe('+*********67');
    expect(maskEmail('a@b.io')).toBe('a***@b.io');
    expect(maskEmail('nonsense')).toBe('***');
  });

  test('when an error carrying addresses is logged (message, cause, own fields, stack), then every string of it is masked', () => {
    const { logger, text } = capture();
    const cause = new Error('upstream refused jane.doe@example.com');
    const err = Object.assign(new Error("The 'To' number +15551234567 is not a valid phone number.", { cause }), {
      moreInfo: 'call 415-555-0100 (555) 123 4567',
    });
    logger.error({ err }, 'send failed');
    logger.warn({ err: 'plain text +15551234567', detail: { reason: 'to jane.doe@example.com' } }, 'job failed');
    const out = text();
    expect(out).toContain('is not a valid phone number');
    expect(out).not.toContain('5551234567');
    expect(out).not.toContain('555-0100');
    expect(out).not.toContain('123 4567');
    expect(out).not.toContain('jane.doe');
    expect(out).toContain('+*********67');
  });

  test('when a line holds a long run of digits and separators with no phone number in it (a request path anyone can send), then it is masked in linear time', () => {
    const { logger, text } = capture();
    // Each digit may start a number (after `(`), and none may end one (a `-` follows every digit).
    // A guard on the order of growth, not a speed figure: a scan that tried each start to the end
    // of the run took 37 s for these 160 kB, a linear one takes a few milliseconds; the bound sits
    // hundreds of times above the linear cost, so a loaded machine does not trip it. (Jest cannot
    // time out a synchronous call, hence the clock.)
    const path = `/${'(1-'.repeat(53_000)}x`;
    const started = process.hrtime.bigint();
    logger.info({ req: { path } }, 'request completed');
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect((JSON.parse(text()) as { req: { path: string } }).req.path).toBe(path);
    expect(ms).toBeLessThan(2_000);
  });

  test('when phone numbers stand in runs of separators, then each run is masked as one, from its first digit that can start a number to its last that can end one', () => {
    const { logger, text } = capture();
    logger.info(
      'a (555) 123 4567-x b 1555 123 4567 1555 123 4568 c +1 555 123 4567. d 555-123-4567-123 e \\n15551234567 f 123 456 78 g 12345678901_ h 1555 123 4567 12-x i 0+15551234567 j (1555)1234567) k 1555 1234567.5',
    );
    const { msg } = JSON.parse(text()) as { msg: string };
    expect(msg).toBe(
      'a (********67-x b ********************68 c +*********67. d ***********23 e \\n*********67 f ******78 g 12345678901_ h *********67 12-x i 0+15551234567 j (*********67) k 1555 1234567.5',
    );
  });

  test("when a number with its '+' follows ':', ',' or '[' (a unique-key error's live-mobile key, a tel: link, a list), then it is masked, and a bare JSON number there is kept", () => {
    const { logger, text } = capture();
    logger.info(
      { count: 15550207777, sizes: [15550207777, 15550207778] },
      'dup key: { liveMobileKey: "acme:+15550207777" } tel:+15550207778 [+15550207779,+15550207770] 10:00:+0530',
    );
    const out = text();
    const { msg, count, sizes } = JSON.parse(out) as { msg: string; count: number; sizes: number[] };
    expect(msg).toBe('dup key: { liveMobileKey: "acme:+*********77" } tel:+*********78 [+*********79,+*********70] 10:00:+0530');
    expect(count).toBe(15550207777);
    expect(sizes).toEqual([15550207777, 15550207778]);
  });

  test('when a phone number is written with dots (a user id, a path, an error message), then it is masked like one with spaces, dashes or brackets', () => {
    const { logger, text } = capture();
    // A user id may hold dots and dashes (`555.123.4567` is a valid one): it reaches the lines of
    // its requests' paths and the unique-key errors that quote it.
    logger.info({ req: { path: '/v1/users/555.123.4567/activation' } }, 'request completed');
    logger.error(
      'dup key: { userId: "1.555.123.4567" } to +1.555.123.4567, +44.20.7946.0958 or 06.12.34.56.78; +1 555.123.4567 +1-555.123.4568. (555) 123-4567, 555 123 4567 or +1-555-123-4567',
    );
    const [request, error] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/********67/activation');
    expect(error?.msg).toBe(
      'dup key: { userId: "*********67" } to +*********67, +**********58 or ********78; +*********67 +*********68. (********67, ********67 or +*********67',
    );
  });

  test('when a phone number mixes dots and dashes (a user id may: 555.123-4567), then it is masked too, and dashed or dotted runs that are not numbers stay whole', () => {
    const { logger, text } = capture();
    // A user id's format allows both separators, and its request paths are logged.
    logger.info({ req: { path: '/v1/users/555.123-4567/activation' } }, 'request completed');
    logger.error('dup key: { userId: "555-123.4567" } and { userId: "1-555.123.4567" }');
    const kept = [
      'release 1.2.3-20261129, range 1.5-2.5',
      'from 2026.11.29-2026.12.31 and 29.11.2026-30.11.2026',
      'an id a1.555-123.4567 and a file 555.123-4567.json',
    ];
    for (const line of kept) logger.info(line);
    const [request, error, ...rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/********67/activation');
    expect(error?.msg).toBe('dup key: { userId: "********67" } and { userId: "*********67" }');
    expect(rest.map((line) => line.msg)).toEqual(kept);
  });

  test('when a phone number is written with underscores, in two dotted groups, with brackets and dots, or in four short groups that are no IP address, then it is masked, and what cannot be a number stays whole', () => {
    const { logger, text } = capture();
    // A user id may hold digits, dots, dashes and underscores (`555_123_4567` is a valid one): it
    // reaches the lines of its requests' paths and the unique-key errors that quote it. Provider
    // error texts quote numbers as the caller wrote them (`(555) 123.4567`).
    logger.info({ req: { path: '/v1/users/555_123_4567/activation' } }, 'request completed');
    logger.error('dup key: { userId: "1_555_123_4567" } { userId: "555_1234567" } { userId: "555.123_4567" } { userId: "555-123_4567" }');
    logger.error('dup key: { userId: "555.1234567" } { userId: "1.555.1234567" } { userId: "44.7700900123" } to +1.555.1234567');
    logger.error("The 'To' number (555) 123.4567 is not valid; nor +1 (555) 123.4567, (555)123.4567 or 555.123.456.789, 34.912.345.678");
    // One dot with ten digits or more, a short whole part and a long fraction: a number written so
    // and a decimal look the same, and a number must not get through.
    logger.info('took 1234.5678901 ms');
    const kept = [
      'from 10.0.0.12, 192.168.100.200 and 255.255.255.255:8080',
      'on 2026.11.29, 2026_11_29_12_34_56 and 2026-11-29_12-34-56',
      'version 1.2.3, 1.8.0_392, Mac OS X 10_15_7',
      'decimals 12.345, 0.1234567891, 1732841234.567, 3.14159265358979 and 1234.567ms',
      'snake_case_12 enterpriseId_1_userId_1 656f1c2a9b8e4d0012345678 550e8400-e29b-41d4-a716-446655440000',
    ];
    for (const line of kept) logger.info(line);
    const [request, underscored, dotted, bracketed, decimal, ...rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/********67/activation');
    expect(underscored?.msg).toBe(
      'dup key: { userId: "*********67" } { userId: "********67" } { userId: "********67" } { userId: "********67" }',
    );
    expect(dotted?.msg).toBe('dup key: { userId: "********67" } { userId: "*********67" } { userId: "**********23" } to +*********67');
    expect(bracketed?.msg).toBe("The 'To' number (********67 is not valid; nor +*********67, (********67 or **********89, *********78");
    expect(decimal?.msg).toBe('took *********01 ms');
    expect(rest.map((line) => line.msg)).toEqual(kept);
  });

  test('when a phone number is glued to a word by an underscore or a dash (a user id such as user_5551234567), then it is masked, and ids, names and times glued so that cannot be a number stay whole', () => {
    const { logger, text } = capture();
    // User ids allow letters, digits, dots, underscores and dashes, and enterprises that key users by
    // their number prefix it so; such an id reaches the logs in its requests' paths and unique-key errors.
    logger.info({ req: { path: '/v1/users/user_5551234567/activation' } }, 'request completed');
    logger.error(
      'dup key: { userId: "jane_15551234567" } { userId: "acct-5551234567" } { userId: "u_+15551234567" } { userId: "x1-5551234567-2" }',
    );
    // An epoch in milliseconds is masked standing alone (it has a number's length), and so glued by
    // an underscore. A uuid whose last group holds only digits stays whole, and a number after it is masked.
    logger.info('job_1701234567890 and 1701234567890 done; 550e8400-e29b-41d4-a716-446655440000 5551234567');
    const kept = [
      // Glued directly to letters (an id, a hash), or with a letter or a dot after it; a time in
      // milliseconds with a suffix (a suffix after a number is masked: see the next test).
      'abc1234567890 req-1234567890abcdef bundle-1234567890.js job_1701234567890_x',
      // More than fifteen digits after the separator: a token, a hash, a snowflake id.
      'user_5551234567890123 sha_12345678901234567890',
      // A uuid whose last group holds only digits.
      '550e8400-e29b-41d4-a716-446655440000',
      // Job ids, index names, negative numbers.
      'otp-dispatch:123 enterpriseId_1_userId_1 offset -1234567890 {"delta":-1234567890} 2026-11-29_12-34-56',
    ];
    for (const line of kept) logger.info(line);
    const [request, dupKey, epoch, ...rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/user_********67/activation');
    expect(dupKey?.msg).toBe(
      'dup key: { userId: "jane_*********67" } { userId: "acct-********67" } { userId: "u_+*********67" } { userId: "x1-*********72" }',
    );
    expect(epoch?.msg).toBe('job_***********90 and ***********90 done; 550e8400-e29b-41d4-a716-446655440000 ********67');
    expect(rest.map((line) => line.msg)).toEqual(kept);
  });

  test('when a phone number has a suffix glued to it by an underscore or a dash (5551234567_old, a user id renamed), then it is masked, and a time in milliseconds glued so stays whole', () => {
    const { logger, text } = capture();
    // A user id keyed by number may carry a suffix (a renamed or second account); it reaches the
    // logs in its requests' paths and unique-key errors.
    logger.info({ req: { path: '/v1/users/5551234567_old/activation' } }, 'request completed');
    logger.error(
      'dup key: { userId: "+15551234567_x" } { userId: "user_5551234567_old" } { userId: "5551234567-old" } { userId: "555-123-4567_2" } { userId: "acct-5551234567-b" }',
    );
    // A dash and digits after the number join its run (as in 555-123-4567-123); a '+' says it is a
    // number whatever its length.
    logger.info('5551234567-2, (555) 123 4567-x and +1701234567890_x');
    const kept = [
      // Thirteen digits starting with 1: an epoch in milliseconds (no number of thirteen digits
      // starts with 1: North America's, country code 1, have eleven).
      'job_1701234567890_x 1701234567890-a1b2c3 upload_1701234567890_photo.png',
      // Sixteen digits or more, letters glued directly, a dot after it, a trailing underscore alone.
      'user_5551234567890123_x req-1234567890abcdef bundle-1234567890.js 12345678901_ -1234567890_x',
      // A uuid whose last group holds only digits.
      '550e8400-e29b-41d4-a716-446655440000_x',
    ];
    for (const line of kept) logger.info(line);
    const [request, dupKey, dashed, ...rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/********67_old/activation');
    expect(dupKey?.msg).toBe(
      'dup key: { userId: "+*********67_x" } { userId: "user_********67_old" } { userId: "********67-old" } { userId: "********67_2" } { userId: "acct-********67-b" }',
    );
    expect(dashed?.msg).toBe('*********72, (********67-x and +***********90_x');
    expect(rest.map((line) => line.msg)).toEqual(kept);
  });

  test('when a number written with dashes, dots or underscores is glued to a word (acct-555-123-4567, user_555.123.4567), then it is masked, and addresses, dates and versions glued so stay whole', () => {
    const { logger, text } = capture();
    // User ids allow letters, digits, dots, underscores and dashes: a prefixed number may be written
    // with any of them, and reaches the logs in its requests' paths and unique-key errors.
    logger.info({ req: { path: '/v1/users/user_555.123.4567/activation' } }, 'request completed');
    logger.error(
      'dup key: { userId: "acct-555-123-4567" } { userId: "user-555.123.4567" } { userId: "u_555_123_4567" } { userId: "id_(555)123-4567" } { userId: "x1-555-123-4567" } { userId: "u_+1-555-123-4567" } { userId: "fr-06-12-34-56-78" }',
    );
    const kept = [
      // EC2's host names (pino writes the host name on every line), an address, dates.
      'ip-172-31-25-143 ip-172-31-25-143.ec2.internal host_192.168.100.200 backup-2026-11-29 log_2026_11_29_12_34_56 ts-29-11-2026-1234',
      // Versions, builds, short ids, file names, a uuid with digit groups.
      'node-v-20-11-1 build_2026.1.15.1234567 a_555.123.4567.json pod-1-2-3-4-5 550e8400-e29b-1234-5678-123456789012',
    ];
    for (const line of kept) logger.info(line);
    const [request, dupKey, ...rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/user_********67/activation');
    expect(dupKey?.msg).toBe(
      'dup key: { userId: "acct-********67" } { userId: "user-********67" } { userId: "u_********67" } { userId: "id_(********67" } { userId: "x1-********67" } { userId: "u_+*********67" } { userId: "fr-********78" }',
    );
    expect(rest.map((line) => line.msg)).toEqual(kept);
  });

  test('when a number or an address is URL-encoded (%2B15551234567, jane%40example.com, encoded twice), then it is masked, and its encoding kept', () => {
    const { logger, text } = capture();
    // A request path is decoded once before it is logged: an id its client encoded twice
    // (%252B1555...), or a path with a malformed escape elsewhere, stays encoded in the line. Form
    // bodies (Twilio's To=) and Redis keys (a user's event stream) encode ids the same way.
    logger.info({ req: { path: '/v1/users/%2B15551234567/activation' } }, 'request completed');
    logger.error(
      'To=%2B15551234567&From=%2B15550000000&Body=x; stream {default:%2B15551234567}; /v1/users/555%20123%204567, %2B1%20(555)%20123-4567, user_%2B15551234567, jane.doe%40example.com, %252B15551234567',
    );
    const kept = 'cpu 95% at 100%, /files/report%202026.pdf, state=abc%2B1234567890xyz, q=a%20b, 50%25 off, /x/%E0%A4%A, 10%2B20%3D30';
    logger.info(kept);
    const [request, encoded, rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { path: string } });
    expect(request?.req?.path).toBe('/v1/users/%2B*********67/activation');
    expect(encoded?.msg).toBe(
      'To=%2B*********67&From=%2B*********00&Body=x; stream {default:%2B*********67}; /v1/users/********67, %2B*********67, user_%2B*********67, j***%40example.com, %2B*********67',
    );
    expect(rest?.msg).toBe(kept);
  });

  test('when an unbroken number follows a word and a colon (a user key default:15551234567, tel:15551234567), then it is masked, and JSON numbers, times and ports stay whole', () => {
    const { logger, text } = capture();
    // A user's key is `<enterpriseId>:<userId>` (sign-in accounts, throttles, look-ups), and a user
    // id may be a number's digits; a JSON number follows a quote and a colon, never a word and one.
    logger.error('account default:15551234567 not found; tel:15551234567, acme:5551234567_old and {userId:+15551234567}');
    const kept =
      '{"count":15551234567,"at":1764419696000} at 12:34:56 host:8080 loader:1256:14 sha256:1234567890abcdef v:12345678901234567890';
    logger.info(kept);
    const [masked, rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    expect(masked?.msg).toBe('account default:*********67 not found; tel:*********67, acme:********67_old and {userId:+*********67}');
    expect(rest?.msg).toBe(kept);
  });

  test('when a phone number is followed directly by its extension (555-123-4567x89, +1-555-123-4567ext12), then the number is masked, and hashes and uuids stay whole', () => {
    const { logger, text } = capture();
    // People write an extension right after the number; a provider's error text or a stored contact
    // field quoted in a message keeps it so. No hash or uuid holds an 'x' or a 't'.
    logger.error('call 555-123-4567x89, +1-555-123-4567ext12, (555) 123-4567X2 or 5551234567x3');
    const kept = 'abc1234567890 1234567890abcdef 1701234567890x2 1920x1080 0x1234567890 abcdef01-2345-6789-01ab-cdef01234567';
    logger.info(kept);
    const [masked, rest] = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    expect(masked?.msg).toBe('call ********67x89, +*********67ext12, (********67X2 or ********67x3');
    expect(rest?.msg).toBe(kept);
  });

  test('when a bracketed area code follows a word (a call in a message: fn(555) 123.4567), then the number is masked as after a space', () => {
    const { logger, text } = capture();
    logger.error('Twilio refused fn(555) 123.4567, call(555)123-4567, to(555)123.4567 and f(1) 555.123.4567; Math.max(1234) 12.5');
    expect((JSON.parse(text()) as { msg: string }).msg).toBe(
      'Twilio refused fn(********67, call(********67, to(********67 and f(*********67; Math.max(1234) 12.5',
    );
  });

  test("when a line holds a browser's version, a certificate's OID, MongoDB's $timestamp or a decimal no number can be written as, then it is logged whole, and tokens a number can be written as stay masked", () => {
    const { logger, text } = capture();
    const kept = [
      // A version's lone 0 group: no number is grouped so.
      '10.0.0.12 - - [29/Nov/2026:12:34:56 +0000] "GET /v1/users/jane.doe HTTP/1.1" 200 1234 "-" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.109 Safari/537.36 Edg/120.0.2210.91"',
      'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 Mobile Safari/537.36',
      // Seven groups or more: no number has that many.
      'certificate policy 1.3.6.1.4.1.311.21.8 and 1.3.6.1.4.1.311.60.2.1.3 refused',
      // Nineteen digits or more: longer than a number dialled with a three-digit exit prefix.
      'E11000 {"$clusterTime":{"clusterTime":{"$timestamp":"7306549806498217985"}},"_id":"652301234567890123456789"}',
      // Two groups with a one-digit first: only 1 and 7 are country codes of one digit.
      'uptime 3.245870083 s, ratio 2.3456789012',
      '    at Module._compile (node:internal/modules/cjs/loader:1256:14) at /app/dist/core/x.js:123:45',
      'x-message-id 14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0 {"code":21211,"more_info":"https://www.twilio.com/docs/errors/21211","status":400}',
    ];
    for (const line of kept) logger.info(line);
    // Masked, because a number can be written so: five short groups (47.22.22.22.22, a Norwegian
    // number in pairs after its country code, is an IPv4 address and a port to the eye), ten
    // digits (an epoch second), a version with no lone 0, and two groups after a 1.
    logger.info('10.20.30.40.50 and 192.168.100.200.1234; ts: Timestamp(1701234567, 1); Chrome/120.1.6099.109; 1.234567891');
    const [...msgs] = text()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(msgs.slice(0, kept.length)).toEqual(kept);
    expect(msgs[kept.length]).toBe('********50 and **************34; ts: Timestamp(********67, 1); Chrome/*********09; ********91');
  });

  test('when dotted digits are not phone numbers (dates, times, IP addresses, versions, decimals, file names), then they are logged whole', () => {
    const { logger, text } = capture();
    const kept = [
      'on 2026.11.29 at 2026.11.29.12.34.56, 29.11.2026 12:34 and 2026-11-29 12:34:56',
      'from 192.168.100.200 10.0.0.1 and 192.168.100.200:8080',
      'version 1.2.3 build 2026.1.15.1234567, v10.15.7',
      'took 1234.567 ms at 1732841234.567, pi 3.14159265358979',
      'wrote 555.123.4567.json and 555.123.4567-x',
      '550e8400-e29b-41d4-a716-446655440000',
    ];
    for (const line of kept) logger.info(line);
    const msgs = text()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(msgs).toEqual(kept);
  });

  test('when a line holds a long run of dotted digit groups (a request path anyone can send), then it is masked in linear time', () => {
    const { logger, text } = capture();
    // Groups of five digits cannot be a dotted number's, so each start is tried to its chain's end;
    // dashes and underscores join groups too, a bracketed area code may start a chain, and a last
    // group may be long (here it never ends: a letter is glued to it). A run of ten digits or more
    // after a word and an underscore or a dash may start a number (a suffix may follow it), and so may
    // dashed groups, a dotted chain after a letter and an underscore or a dash, and a bracket after a word.
    // A URL token holding an escape is decoded and read as a whole.
    const path = [
      `/${'1.1.12345.'.repeat(8_000)}-${'1-1.12345-'.repeat(8_000)}x`,
      `${'1_1_12345_'.repeat(8_000)}x`,
      `${'(1) 1.1_'.repeat(10_000)}x`,
      `${'1'.repeat(80_000)}.1x`,
      `${'a_12345678901234567'.repeat(5_000)}x`,
      `${'a-1701234567890-'.repeat(6_000)}x`,
      `${'a_1-1-1-1-1-1-1-'.repeat(6_000)}x`,
      `${'a_1.1.12345.'.repeat(8_000)}x`,
      `u_${'1234567890-'.repeat(8_000)}x`,
      `${'a-1-1_+'.repeat(15_000)}x`,
      `${'a(1) 1.1_'.repeat(10_000)}x`,
      `f(1)${'1.1.12345.'.repeat(8_000)}x`,
      `${'%2B1%20'.repeat(12_000)}x`,
      `${'a'.repeat(40_000)}%ZZ${'b'.repeat(40_000)}%2Bx`,
      `${'%252B1-'.repeat(12_000)}x`,
    ].join('/');
    const started = process.hrtime.bigint();
    logger.info({ req: { path } }, 'request completed');
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect((JSON.parse(text()) as { req: { path: string } }).req.path).toBe(path);
    expect(ms).toBeLessThan(2_000);
  });

  test('when ids that carry a user id are logged (activation deliveries, enrollment jobs), in fields or in text, then only the user id is masked', () => {
    const { logger, text } = capture();
    const email = activationDeliveryId({ enterpriseId: 'default', userId: 'alice.smith@example.com' }, 1, 'EMAIL');
    const sms = activationDeliveryId({ enterpriseId: 'acme', userId: 'bob.jones' }, 2, 'SMS');
    logger.warn({ deliveryId: email, attempt: 1, err: 'timeout' }, 'transient delivery failure');
    logger.warn({ jobId: enrollmentJobId('default', '15550001111', 1), err: `unknown delivery ${sms}` }, 'job failed');
    logger.warn({ jobId: enrollmentJobId('acme', 'carol-7', 3) }, 'job stalled; it will be retried');
    logger.info({ deliveryId: `${sms}-failover-1` }, `delivery ${email} failed over`);
    const out = text();
    const b64 = (value: string) => Buffer.from(value).toString('base64url');
    for (const clear of ['alice', b64('alice.smith@example.com'), '5550001111', 'bob.jones', b64('bob.jones'), 'carol']) {
      expect(out).not.toContain(clear);
    }
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { deliveryId: 'activation-***-1-EMAIL' },
      { jobId: 'enroll-***-1', err: 'unknown delivery activation-YWNtZQ.***-2-SMS' },
      { jobId: 'enroll-acme~***-3' },
      { deliveryId: 'activation-YWNtZQ.***-2-SMS-failover-1', msg: 'delivery activation-***-1-EMAIL failed over' },
    ]);
  });

  test('when strings hold ids, times and hashes that are not addresses, then they are logged whole', () => {
    const { logger, text } = capture();
    const id = '550e8400-e29b-41d4-a716-446655440000';
    logger.info({ errorId: id, at: '2026-11-23T01:00:06.168Z', hash: 'a1234567890123456789b', count: 12345678901 }, `reference ${id}`);
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).toMatchObject({
      errorId: id,
      at: '2026-11-23T01:00:06.168Z',
      hash: 'a1234567890123456789b',
      count: 12345678901,
      msg: `reference ${id}`,
    });
    expect(typeof line.time).toBe('number');
  });
});
