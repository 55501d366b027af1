import { routeDocs } from '../../../api/openapi/route-docs.js';
import { getValidator, loadSchemas } from '../../../core/platform/schemas/schema-registry.js';
import { describeSchemaError, schemaErrorLine } from '../../../core/platform/schemas/schema-error-message.js';

type Node = Record<string, unknown>;

const byId = new Map(loadSchemas().map((schema) => [schema.$id, schema as Node]));

/** Every `pattern` a request body can break, with the words beside it, following `$ref`s into other files (`not` excepted: its pattern is what must not match). */
function patternsOf(id: string, seen = new Set<string>()): { where: string; pattern: string; rule: unknown }[] {
  if (seen.has(id)) return [];
  seen.add(id);
  const found: { where: string; pattern: string; rule: unknown }[] = [];
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`));
    if (!node || typeof node !== 'object') return;
    const schema = node as Node;
    if (typeof schema.pattern === 'string') found.push({ where, pattern: schema.pattern, rule: schema['x-pattern-rule'] });
    if (typeof schema.$ref === 'string' && !schema.$ref.startsWith('#'))
      found.push(...patternsOf(schema.$ref.split('#')[0] as string, seen));
    for (const [key, value] of Object.entries(schema)) if (key !== 'not') walk(value, `${where}/${key}`);
  };
  walk(byId.get(id), id);
  return found;
}

describe('patterns in words', () => {
  test('every pattern a request body can break says its rule in words (x-pattern-rule)', () => {
    const requestSchemas = [...new Set(routeDocs.flatMap((doc) => (doc.requestSchema ? [doc.requestSchema] : [])))];
    const patterns = requestSchemas.flatMap((id) => patternsOf(id));
    expect(patterns.length).toBeGreaterThan(10);
    expect(patterns.filter((p) => typeof p.rule !== 'string' || !p.rule.startsWith('must ')).map((p) => p.where)).toEqual([]);
  });

  test('when a group name breaks its pattern, then the refusal says the rule, not the regular expression', () => {
    const validate = getValidator('admin-groups.create.json');
    expect(validate({ name: 'a,b' })).toBe(false);
    expect(schemaErrorLine(validate.errors?.[0] as never)).toBe('name: must not contain a comma, nor begin or end with a blank');
  });

  test('when an OTP field breaks its pattern, then the sentence names the field and the rule in words', () => {
    const validate = getValidator('otp.generate.json');
    expect(validate({ userId: 'a', dispatchOptions: { SMS: 't' }, dynamicMacros: {}, attempts: 1, expiresIn: 60, otpSpec: 'N6' })).toBe(
      false,
    );
    expect(describeSchemaError('otp.generate.json', validate.errors?.[0] as never)).toBe(
      'otpSpec must be <set>-<length>: a set N, L, U, M, LN, UN or MN, a hyphen and a length 4 to 9 (for example N-6)',
    );
  });
});
