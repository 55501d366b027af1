import { parseGenerateOtpRequest } from '../../../core/otp/otp-request.validator.js';
import { rejectionOf, validBody } from './otp-request-fixtures.js';

const HASH_SPECS_TEXT = 'PLAIN, SHA_256, SHA_384, SHA_512, SHA_HEX_256, SHA_HEX_384, SHA_HEX_512';
const TOP_LEVEL_FIELDS =
  'userId, otpSpecs, otpSpec, dispatchOptions, fallbackDispatchOptions, dynamicMacros, attempts, expiresIn, hashSpec, msgId, generateJwt';

describe('parseGenerateOtpRequest: 400', () => {
  test.each([
    ['null', null],
    ['an array', [validBody()]],
    ['a string', 'userId=alice'],
    ['a number', 42],
    ['absent', undefined],
  ])('when the body is %s, then 400 "Request body must be a JSON object"', (_label, body) => {
    expect(rejectionOf(body)).toEqual({ status: 400, message: 'Request body must be a JSON object' });
  });

  test.each(['userId', 'dispatchOptions', 'dynamicMacros', 'attempts', 'expiresIn'])(
    'when mandatory field %s is missing or null, then 400 naming it',
    (field) => {
      const missing = validBody();
      delete missing[field];
      const expected = { status: 400, message: `Missing mandatory field: ${field}` };
      expect(rejectionOf(missing)).toEqual(expected);
      expect(rejectionOf(validBody({ [field]: null }))).toEqual(expected);
    },
  );

  test('when several mandatory fields are missing and others are invalid, then 400 names the first in spec order', () => {
    expect(rejectionOf({ expiresIn: 1, attempts: 'x', otpSpec: 'bad' })).toEqual({
      status: 400,
      message: 'Missing mandatory field: userId',
    });
  });
});

describe('parseGenerateOtpRequest: 422 from the schema', () => {
  test.each([
    ['userId is a number', { userId: 7 }, 'userId must be a string'],
    ['userId is empty', { userId: '' }, 'userId must be between 1 and 64 characters long'],
    ['userId is too long', { userId: 'a'.repeat(65) }, 'userId must be between 1 and 64 characters long'],
    ['userId has a space', { userId: 'a b' }, 'userId must hold only the characters A-Z a-z 0-9 . _ @ -'],
    ['dispatchOptions is a string', { dispatchOptions: 'SMS' }, 'dispatchOptions must be an object'],
    ['dispatchOptions is an array', { dispatchOptions: ['SMS'] }, 'dispatchOptions must be an object'],
    ['dispatchOptions is empty', { dispatchOptions: {} }, 'dispatchOptions must have at least 1 entry'],
    [
      'dispatchOptions has another channel',
      { dispatchOptions: { SMS: 't', FAX: 't' } },
      'dispatchOptions.FAX is not allowed (allowed: SMS, EMAIL)',
    ],
    ['a template name is not a string', { dispatchOptions: { EMAIL: 5 } }, 'dispatchOptions.EMAIL must be a string'],
    ['a template name is empty', { dispatchOptions: { SMS: '' } }, 'dispatchOptions.SMS must be between 1 and 128 characters long'],
    ['dynamicMacros is an array', { dynamicMacros: [] }, 'dynamicMacros must be an object'],
    [
      'a macro name lacks underscores',
      { dynamicMacros: { NAME: 'x' } },
      'dynamicMacros key "NAME" must be a macro name: upper-case letters, digits and _ between double underscores (__NAME__)',
    ],
    [
      'a macro name is lowercase',
      { dynamicMacros: { __name__: 'x' } },
      'dynamicMacros key "__name__" must be a macro name: upper-case letters, digits and _ between double underscores (__NAME__)',
    ],
    ['a macro value is a number', { dynamicMacros: { __AMOUNT__: 10 } }, 'dynamicMacros.__AMOUNT__ must be a string'],
    ['attempts is 0', { attempts: 0 }, 'attempts must be between 1 and 100'],
    ['attempts is 101', { attempts: 101 }, 'attempts must be between 1 and 100'],
    ['attempts is fractional', { attempts: 1.5 }, 'attempts must be an integer'],
    ['attempts is a numeric string', { attempts: '3' }, 'attempts must be an integer'],
    ['expiresIn is 14', { expiresIn: 14 }, 'expiresIn must be between 15 and 86400'],
    ['expiresIn is 86401', { expiresIn: 86401 }, 'expiresIn must be between 15 and 86400'],
    ['hashSpec is unknown', { hashSpec: 'MD5' }, `hashSpec must be one of ${HASH_SPECS_TEXT}`],
    ['hashSpec is null', { hashSpec: null }, 'hashSpec must be a string'],
    ['msgId is empty', { msgId: '' }, 'msgId must be between 1 and 128 characters long'],
    ['msgId is too long', { msgId: 'm'.repeat(129) }, 'msgId must be between 1 and 128 characters long'],
    ['generateJwt is a string', { generateJwt: 'true' }, 'generateJwt must be a boolean'],
    ['an unknown field is sent', { channel: 'SMS' }, `channel is not allowed (allowed: ${TOP_LEVEL_FIELDS})`],
    [
      'otpSpec has no hyphen',
      { otpSpec: 'N6' },
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    ],
    [
      'otpSpec length is 3',
      { otpSpec: 'N-3' },
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    ],
    [
      'otpSpec length is 10',
      { otpSpec: 'N-10' },
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    ],
    [
      'otpSpec set is NL (not a legacy set)',
      { otpSpec: 'NL-6' },
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    ],
    [
      'otpSpec set has S',
      { otpSpec: 'S-6' },
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    ],
    ['otpSpec is a number', { otpSpec: 6 }, 'otpSpec must be a string'],
    ['otpSpecs is an object', { otpSpecs: { length: 6, charSets: 'N' } }, 'otpSpecs must be an array'],
    ['otpSpecs is empty', { otpSpecs: [] }, 'otpSpecs must have between 1 and 3 items'],
    ['otpSpecs has 4 segments', { otpSpecs: Array(4).fill({ length: 4, charSets: 'N' }) }, 'otpSpecs must have between 1 and 3 items'],
    ['a segment is not an object', { otpSpecs: ['N-6'] }, 'otpSpecs[0] must be an object'],
    ['a segment has no length', { otpSpecs: [{ charSets: 'N' }] }, 'otpSpecs[0].length is required'],
    ['a segment has no charSets', { otpSpecs: [{ length: 6 }] }, 'otpSpecs[0].charSets is required'],
    ['a segment is 3 long', { otpSpecs: [{ length: 3, charSets: 'N' }] }, 'otpSpecs[0].length must be between 4 and 12'],
    ['a single segment is 15 long', { otpSpecs: [{ length: 15, charSets: 'N' }] }, 'otpSpecs[0].length must be between 4 and 12'],
    [
      'a second segment is 13 long',
      {
        otpSpecs: [
          { length: 4, charSets: 'N' },
          { length: 13, charSets: 'N' },
        ],
      },
      'otpSpecs[1].length must be between 4 and 12',
    ],
    ['charSets is an array', { otpSpecs: [{ length: 6, charSets: ['N'] }] }, 'otpSpecs[0].charSets must be a string'],
    [
      'a minimum is negative',
      { otpSpecs: [{ length: 6, charSets: 'N', minNumeric: -1 }] },
      'otpSpecs[0].minNumeric must be between 0 and 12',
    ],
    ['a minimum is fractional', { otpSpecs: [{ length: 6, charSets: 'S', minSpecial: 0.5 }] }, 'otpSpecs[0].minSpecial must be an integer'],
    ['exclude is a string', { otpSpecs: [{ length: 6, charSets: 'N', exclude: '0' }] }, 'otpSpecs[0].exclude must be an array'],
    [
      'an excluded entry has two characters',
      { otpSpecs: [{ length: 6, charSets: 'N', exclude: ['0', '12'] }] },
      'otpSpecs[0].exclude[1] must be exactly 1 character long',
    ],
    [
      'an excluded entry is empty',
      { otpSpecs: [{ length: 6, charSets: 'N', exclude: [''] }] },
      'otpSpecs[0].exclude[0] must be exactly 1 character long',
    ],
    [
      'a segment has an unknown field',
      { otpSpecs: [{ length: 6, charSets: 'N', minDigits: 2 }] },
      'otpSpecs[0].minDigits is not allowed (allowed: length, charSets, minLowercase, minUppercase, minNumeric, minSpecial, exclude)',
    ],
  ])('when %s, then 422 with that rule', (_label, overrides, message) => {
    expect(rejectionOf(validBody(overrides))).toEqual({ status: 422, message });
  });

  test('when two fields are invalid, then the message is the same whatever the key order', () => {
    const forward = { ...validBody(), attempts: 0, expiresIn: 1 };
    const backward = Object.fromEntries(Object.entries(forward).reverse());
    expect(rejectionOf(forward)).toEqual({ status: 422, message: 'attempts must be between 1 and 100' });
    expect(rejectionOf(backward)).toEqual(rejectionOf(forward));
  });

  test('when both otpSpecs and a malformed otpSpec are sent, then otpSpec is ignored, malformed or not', () => {
    for (const otpSpec of ['N-12', 6, { set: 'N' }]) {
      const request = parseGenerateOtpRequest(validBody({ otpSpecs: [{ length: 6, charSets: 'N' }], otpSpec }));
      expect(request.segments).toEqual([expect.objectContaining({ length: 6, charSets: ['N'] })]);
    }
  });

  test('when only a malformed otpSpec is sent, then 422', () => {
    expect(rejectionOf(validBody({ otpSpec: 'N-12' }))).toEqual({
      status: 422,
      message: 'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    });
  });
});

describe('parseGenerateOtpRequest: 422 from the segment rules', () => {
  const segment = (fields: Record<string, unknown>) => validBody({ otpSpecs: [{ length: 6, ...fields }] });

  test.each([
    ['P', 'otpSpecs[0].charSets: unknown identifier "P" (allowed: N, L, U, M, S)'],
    ['X', 'otpSpecs[0].charSets: unknown identifier "X" (allowed: N, L, U, M, S)'],
    ['n', 'otpSpecs[0].charSets: unknown identifier "n" (allowed: N, L, U, M, S)'],
    ['N-U', 'otpSpecs[0].charSets: unknown identifier "-" (allowed: N, L, U, M, S)'],
    ['NNU', 'otpSpecs[0].charSets: identifier "N" is repeated'],
    ['USU', 'otpSpecs[0].charSets: identifier "U" is repeated'],
    ['', 'otpSpecs[0].charSets must not be empty'],
    ['ML', 'otpSpecs[0].charSets: M cannot be combined with L or U'],
    ['UM', 'otpSpecs[0].charSets: M cannot be combined with L or U'],
    ['LNMS', 'otpSpecs[0].charSets: M cannot be combined with L or U'],
  ])('when charSets is "%s", then 422 naming the rule', (charSets, message) => {
    expect(rejectionOf(segment({ charSets }))).toEqual({ status: 422, message });
  });

  test.each(['N', 'L', 'U', 'M', 'S', 'NU', 'US', 'LNS', 'LN', 'UN', 'MN', 'LS', 'MS', 'UNS', 'MNS', 'LU', 'LUNS', 'SNUL'])(
    'when charSets is "%s", then it is accepted with its identifiers in order',
    (charSets) => {
      const [normalized] = parseGenerateOtpRequest(segment({ charSets })).segments;
      expect(normalized.charSets).toEqual([...charSets]);
    },
  );

  test('when the second segment combines M with U, then 422 names that segment', () => {
    const body = validBody({
      otpSpecs: [
        { length: 4, charSets: 'N' },
        { length: 4, charSets: 'MU' },
      ],
    });
    expect(rejectionOf(body)).toEqual({ status: 422, message: 'otpSpecs[1].charSets: M cannot be combined with L or U' });
  });

  test('when segments of 4 and 10 are sent, then 422 on the total length', () => {
    const body = validBody({
      otpSpecs: [
        { length: 4, charSets: 'N' },
        { length: 10, charSets: 'N' },
      ],
    });
    expect(rejectionOf(body)).toEqual({ status: 422, message: 'otpSpecs total length must be between 4 and 12, got 14' });
  });

  test('when three segments of 5, 4 and 4 are sent, then 422 on the total length', () => {
    const body = validBody({
      otpSpecs: [
        { length: 5, charSets: 'N' },
        { length: 4, charSets: 'U' },
        { length: 4, charSets: 'L' },
      ],
    });
    expect(rejectionOf(body)).toEqual({ status: 422, message: 'otpSpecs total length must be between 4 and 12, got 13' });
  });

  test.each([
    [[4, 5], 9],
    [[4, 4, 4], 12],
    [[12], 12],
    [[4], 4],
  ])('when segment lengths are %j, then they are accepted (total %i)', (lengths, total) => {
    const request = parseGenerateOtpRequest(validBody({ otpSpecs: lengths.map((length) => ({ length, charSets: 'N' })) }));
    expect(request.segments.map((s) => s.length)).toEqual(lengths);
    expect(request.segments.reduce((sum, s) => sum + s.length, 0)).toBe(total);
  });

  test('when length is 4 with minimums 1,1,1,1 over MNS, then it is accepted', () => {
    const body = segment({ length: 4, charSets: 'MNS', minLowercase: 1, minUppercase: 1, minNumeric: 1, minSpecial: 1 });
    expect(parseGenerateOtpRequest(body).segments).toEqual([
      { length: 4, charSets: ['M', 'N', 'S'], minLowercase: 1, minUppercase: 1, minNumeric: 1, minSpecial: 1, exclude: [] },
    ]);
  });

  test('when length is 4 with minimums 2,1,1,1 over MNS, then 422 on the sum', () => {
    const body = segment({ length: 4, charSets: 'MNS', minLowercase: 2, minUppercase: 1, minNumeric: 1, minSpecial: 1 });
    expect(rejectionOf(body)).toEqual({ status: 422, message: 'otpSpecs[0]: sum of applicable minimums (5) must not exceed length (4)' });
  });

  test('when minimums are given for absent sets, then they are ignored, not counted and normalized to 0', () => {
    const body = segment({ length: 4, charSets: 'N', minNumeric: 4, minLowercase: 4, minUppercase: 4, minSpecial: 4 });
    expect(parseGenerateOtpRequest(body).segments[0]).toEqual({
      length: 4,
      charSets: ['N'],
      minLowercase: 0,
      minUppercase: 0,
      minNumeric: 4,
      minSpecial: 0,
      exclude: [],
    });
  });

  test('when L is present, then minLowercase counts and minUppercase is ignored', () => {
    const body = segment({ length: 4, charSets: 'LN', minLowercase: 3, minNumeric: 1, minUppercase: 9 });
    expect(parseGenerateOtpRequest(body).segments[0]).toMatchObject({ minLowercase: 3, minUppercase: 0, minNumeric: 1 });
    expect(rejectionOf(segment({ length: 4, charSets: 'LN', minLowercase: 4, minNumeric: 1 }))).toEqual({
      status: 422,
      message: 'otpSpecs[0]: sum of applicable minimums (5) must not exceed length (4)',
    });
  });

  test('when exclude removes every digit of an N-only segment, then 422 on the empty segment pool', () => {
    expect(rejectionOf(segment({ charSets: 'N', exclude: [...'0123456789'] }))).toEqual({
      status: 422,
      message: 'otpSpecs[0].exclude removes every character of the segment',
    });
  });

  test('when exclude removes every digit while minNumeric is above zero, then 422 naming the minimum', () => {
    expect(rejectionOf(segment({ charSets: 'NS', minNumeric: 2, exclude: [...'9876543210'] }))).toEqual({
      status: 422,
      message: 'otpSpecs[0].exclude removes every numeric character but minNumeric is 2',
    });
  });

  test('when exclude removes every lowercase letter of M while minLowercase is 1, then 422 naming it', () => {
    expect(rejectionOf(segment({ charSets: 'M', minLowercase: 1, exclude: [...'abcdefghijklmnopqrstuvwxyz'] }))).toEqual({
      status: 422,
      message: 'otpSpecs[0].exclude removes every lowercase character but minLowercase is 1',
    });
  });

  test('when exclude empties a pool whose minimum is 0, then it is accepted and duplicates are dropped', () => {
    const body = segment({ charSets: 'NS', exclude: [...'0123456789', '0', 'x'] });
    expect(parseGenerateOtpRequest(body).segments[0].exclude).toEqual([...'0123456789', 'x']);
  });
});

describe('parseGenerateOtpRequest: normalized result and defaults', () => {
  test('when neither otpSpecs nor otpSpec is sent, then one N-6 segment and every default', () => {
    expect(parseGenerateOtpRequest(validBody())).toEqual({
      userId: 'alice',
      segments: [{ length: 6, charSets: ['N'], minLowercase: 0, minUppercase: 0, minNumeric: 0, minSpecial: 0, exclude: [] }],
      channels: { SMS: 'otp-sms' },
      dynamicMacros: {},
      attempts: 3,
      expiresIn: 300,
      hashSpec: 'SHA_512',
      generateJwt: false,
    });
  });

  test.each([
    ['N-4', 4, ['N']],
    ['L-5', 5, ['L']],
    ['U-7', 7, ['U']],
    ['M-8', 8, ['M']],
    ['LN-9', 9, ['L', 'N']],
    ['UN-6', 6, ['U', 'N']],
    ['MN-6', 6, ['M', 'N']],
  ])('when otpSpec is %s, then one segment of length %i over %j', (otpSpec, length, charSets) => {
    expect(parseGenerateOtpRequest(validBody({ otpSpec })).segments).toEqual([
      { length, charSets, minLowercase: 0, minUppercase: 0, minNumeric: 0, minSpecial: 0, exclude: [] },
    ]);
  });

  test('when both otpSpecs and otpSpec are sent, then otpSpecs wins', () => {
    const request = parseGenerateOtpRequest(
      validBody({
        otpSpec: 'LN-9',
        otpSpecs: [
          { length: 4, charSets: 'U' },
          { length: 4, charSets: 'N' },
        ],
      }),
    );
    expect(request.segments.map((s) => [s.length, s.charSets])).toEqual([
      [4, ['U']],
      [4, ['N']],
    ]);
  });

  test('when every optional field is sent, then each is carried through', () => {
    const request = parseGenerateOtpRequest(
      validBody({
        dispatchOptions: { SMS: 'otp-sms', EMAIL: 'otp-email' },
        dynamicMacros: { __BANK__: 'Acme', __AMOUNT_2__: '10.00' },
        attempts: 100,
        expiresIn: 86400,
        hashSpec: 'PLAIN',
        msgId: 'msg-1',
        generateJwt: true,
      }),
    );
    expect(request).toMatchObject({
      channels: { SMS: 'otp-sms', EMAIL: 'otp-email' },
      dynamicMacros: { __BANK__: 'Acme', __AMOUNT_2__: '10.00' },
      attempts: 100,
      expiresIn: 86400,
      hashSpec: 'PLAIN',
      msgId: 'msg-1',
      generateJwt: true,
    });
  });

  test('when the limits are at their lowest, then they are accepted', () => {
    expect(parseGenerateOtpRequest(validBody({ attempts: 1, expiresIn: 15 }))).toMatchObject({ attempts: 1, expiresIn: 15 });
  });

  test('when the caller mutates its body afterwards, then the normalized request does not change', () => {
    const body = validBody({ dynamicMacros: { __A__: 'x' } });
    const request = parseGenerateOtpRequest(body);
    (body.dynamicMacros as Record<string, string>).__A__ = 'changed';
    expect(request.dynamicMacros).toEqual({ __A__: 'x' });
    expect(Object.isFrozen(request)).toBe(true);
  });
});
