import type { ErrorObject } from 'ajv';
import { firstSchemaErrorLine, schemaErrorField, schemaErrorLine } from '../../../core/platform/schemas/schema-error-message.js';

const error = (instancePath: string, params: Record<string, unknown> = {}, keyword = 'x', message?: string): ErrorObject => ({
  keyword,
  instancePath,
  schemaPath: '#',
  params,
  ...(message === undefined ? {} : { message }),
});

describe('field names of schema violations', () => {
  test('when the violation is inside arrays and objects, then the field is written as a path', () => {
    expect(schemaErrorField(error('/scopes/0'))).toBe('scopes[0]');
    expect(schemaErrorField(error('/otpSpecs/1/length'))).toBe('otpSpecs[1].length');
  });

  test('when a property is missing or not allowed, then that property is named', () => {
    expect(schemaErrorField(error('', { missingProperty: 'name' }))).toBe('name');
    expect(schemaErrorField(error('/dispatchOptions', { additionalProperty: 'FAX' }))).toBe('dispatchOptions.FAX');
  });

  test('when a key is not a plain name, then it is quoted in brackets, so the path stays unambiguous', () => {
    expect(schemaErrorField(error('/dynamicMacros/first name'))).toBe('dynamicMacros["first name"]');
    expect(schemaErrorField(error('/a~1b/c.d'))).toBe('["a/b"]["c.d"]');
  });

  test('when the whole body is wrong, then the field is (body)', () => {
    expect(schemaErrorField(error(''))).toBe('');
    expect(schemaErrorLine(error('', {}, 'minProperties', 'must NOT have fewer than 1 properties'))).toBe(
      '(body): must NOT have fewer than 1 properties',
    );
    expect(schemaErrorLine(error('', {}, 'type', 'must be object'), '(payload)')).toBe('(payload): must be object');
  });
});

describe('one-line refusals', () => {
  test("when a rule is broken, then the line is <field>: <Ajv's rule>, and an extra property is not allowed", () => {
    expect(schemaErrorLine(error('/name', {}, 'minLength', 'must NOT have fewer than 1 characters'))).toBe(
      'name: must NOT have fewer than 1 characters',
    );
    expect(schemaErrorLine(error('', { missingProperty: 'keys' }, 'required', "must have required property 'keys'"))).toBe(
      "keys: must have required property 'keys'",
    );
    expect(schemaErrorLine(error('', { additionalProperty: 'extra' }, 'additionalProperties', 'must NOT have additional properties'))).toBe(
      'extra: is not allowed',
    );
    expect(schemaErrorLine(error('/x'))).toBe('x: is invalid');
  });

  test('when there are several errors, then the first is told; when none, the whole value is invalid', () => {
    expect(firstSchemaErrorLine([error('/a', {}, 'type', 'must be string'), error('/b')], '(payload)')).toBe('a: must be string');
    expect(firstSchemaErrorLine(undefined, '(payload)')).toBe('(payload): is invalid');
  });
});
