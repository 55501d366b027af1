import type { ErrorObject } from 'ajv';
import { fieldOfAjvError } from '../../api/middleware/validate-body.middleware.js';

const error = (instancePath: string, params: Record<string, unknown> = {}): ErrorObject => ({
  keyword: 'x',
  instancePath,
  schemaPath: '#',
  params,
});

describe('field names of schema violations', () => {
  test('when the violation is inside arrays and objects, then the field is written as a path', () => {
    expect(fieldOfAjvError(error('/scopes/0'))).toBe('scopes[0]');
    expect(fieldOfAjvError(error('/otpSpecs/1/length'))).toBe('otpSpecs[1].length');
  });

  test('when a property is missing or not allowed, then that property is named', () => {
    expect(fieldOfAjvError(error('', { missingProperty: 'name' }))).toBe('name');
    expect(fieldOfAjvError(error('/dispatchOptions', { additionalProperty: 'FAX' }))).toBe('dispatchOptions.FAX');
  });

  test('when the whole body is wrong, then the field is (body)', () => {
    expect(fieldOfAjvError(error(''))).toBe('(body)');
  });
});
