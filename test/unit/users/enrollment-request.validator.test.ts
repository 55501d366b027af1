import { ValidationError } from '../../../core/platform/errors/app-error.js';
import { parseEnrollmentRequest, splitGroups } from '../../../core/users/enrollment-request.validator.js';

const valid = { userId: 'u1', primaryGroup: 'retail', firstName: 'Ada', lastName: 'L', emailId: 'a@example.com' };

function fieldNamed(body: Record<string, unknown>): string {
  try {
    parseEnrollmentRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).error).toBe('Invalid data.');
    return (err as ValidationError).message;
  }
  return 'valid';
}

describe('enrollment request validation', () => {
  test('when every field is broken, then the fields are named one by one in the documented field order', () => {
    const order = [
      'userId',
      'primaryGroup',
      'firstName',
      'lastName',
      'secondaryGroups',
      'emailId',
      'mobileNumber',
      'preferredStatus',
      'predefinedCode',
      'predefinedVerKey',
      'sourceType',
      'loginId',
      'comments',
      'selfieImage',
    ];
    const body: Record<string, unknown> = Object.fromEntries([...order].reverse().map((f) => [f, 12]));
    for (const field of order) {
      expect(fieldNamed(body)).toBe(`[Invalid field ${field}]`);
      body[field] = {
        userId: 'u',
        primaryGroup: 'g',
        firstName: 'f',
        lastName: 'l',
        secondaryGroups: 'a',
        emailId: 'a@b.co',
        mobileNumber: '1234567890',
        preferredStatus: 'CREATED',
        predefinedCode: 'ABCD',
        predefinedVerKey: 'K',
        sourceType: 'SVC',
        loginId: 'l',
        comments: 'c',
        selfieImage: 'x',
      }[field];
    }
    expect(fieldNamed(body)).toBe('valid');
  });

  test('when the body is valid, then defaults are applied: CREATED, SVC, loginId = userId, no groups', () => {
    expect(parseEnrollmentRequest({ ...valid })).toEqual({
      ...valid,
      secondaryGroups: [],
      preferredStatus: 'CREATED',
      sourceType: 'SVC',
      loginId: 'u1',
    });
  });

  test('when there is no address, then emailId is named unless a code is predefined', () => {
    const { emailId: _e, ...rest } = valid;
    expect(fieldNamed(rest)).toBe('[Invalid field emailId]');
    expect(fieldNamed({ ...rest, mobileNumber: '+1234567890' })).toBe('valid');
    expect(fieldNamed({ ...rest, predefinedCode: 'ABCD' })).toBe('valid');
  });

  test('when an unknown field is sent after valid ones, then it is named', () => {
    expect(fieldNamed({ ...valid, extra: 1 })).toBe('[Invalid field extra]');
  });

  test('when secondary groups have blanks, empties and repeats, then they are trimmed, dropped and kept once', () => {
    expect(splitGroups(' a , ,b,,a ,')).toEqual(['a', 'b']);
    expect(splitGroups('')).toEqual([]);
    expect(splitGroups(undefined)).toEqual([]);
  });
});
