import { patternRule } from './pattern-rules.js';
import { getAjv, type ErrorObject } from './schema-registry.js';

// The one place Ajv errors become words. Every wording names the field the way callers write
// it (schemaErrorField); the rule is Ajv's own (schemaErrorLine: request bodies, the admin CLI,
// configuration, job payloads) or, for the OTP API, a sentence with both bounds (describeSchemaError).

type SchemaNode = Record<string, unknown>;

const pathParts = (instancePath: string): string[] =>
  instancePath === ''
    ? []
    : instancePath
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));

/** `/otpSpecs/0/length` -> `otpSpecs[0].length`: the way callers write the field they sent. */
export function formatFieldPath(instancePath: string, child?: string): string {
  const parts = pathParts(instancePath);
  if (child !== undefined) parts.push(child);
  return parts.reduce((path, part) => {
    if (/^[0-9]+$/.test(part)) return `${path}[${part}]`;
    if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(part)) return path === '' ? part : `${path}.${part}`;
    return `${path}[${JSON.stringify(part)}]`;
  }, '');
}

/** The field an error is about: `scopes[1]`, `name`, or the missing/extra property; '' for the whole value. */
export function schemaErrorField(error: ErrorObject): string {
  const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
  const child = params.missingProperty ?? params.additionalProperty;
  return formatFieldPath(error.instancePath, child === undefined ? undefined : String(child));
}

/** The words the schema gives a broken pattern (pattern-rules.ts), if any. */
function patternRuleOf(error: ErrorObject): string | undefined {
  const { pattern } = error.params as { pattern?: unknown };
  return error.keyword === 'pattern' && typeof pattern === 'string' ? patternRule(pattern) : undefined;
}

/** The rule in Ajv's words (`must be string`), or the schema's for a pattern; an extra property `is not allowed`. */
export function schemaErrorReason(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return 'is not allowed';
  return patternRuleOf(error) ?? error.message ?? 'is invalid';
}

/** `<field>: <rule>`, the whole value named `whole` (`(body)` for a request body). */
export function schemaErrorLine(error: ErrorObject, whole = '(body)'): string {
  return `${schemaErrorField(error) || whole}: ${schemaErrorReason(error)}`;
}

/** The first error's line (Ajv stops at the first unless `allErrors`), for one-line refusals. */
export function firstSchemaErrorLine(errors: ErrorObject[] | null | undefined, whole: string): string {
  const first = errors?.[0];
  return first ? schemaErrorLine(first, whole) : `${whole}: is invalid`;
}

function derefSchema(node: unknown): SchemaNode | undefined {
  let current = node as SchemaNode | undefined;
  // Bounded so that a cyclic $ref can never hang message formatting.
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 10; hops += 1) {
    current = getAjv().getSchema(current.$ref)?.schema as SchemaNode | undefined;
  }
  return current;
}

/**
 * The sub-schema that judged the value at `instancePath`. Ajv without `verbose` does not hand
 * back the failing schema, and range messages need both bounds, so we walk the schema ourselves.
 */
function subschemaAt(rootId: string, instancePath: string): SchemaNode | undefined {
  let node = derefSchema(getAjv().getSchema(rootId)?.schema);
  for (const part of pathParts(instancePath)) {
    if (!node) return undefined;
    const properties = node.properties as Record<string, unknown> | undefined;
    if (/^[0-9]+$/.test(part) && typeof node.items === 'object') node = derefSchema(node.items);
    else if (properties && Object.hasOwn(properties, part)) node = derefSchema(properties[part]);
    else if (typeof node.additionalProperties === 'object') node = derefSchema(node.additionalProperties);
    else return undefined;
  }
  return node;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function describeRange(field: string, min: unknown, max: unknown, unit: (n: number) => string, verb: string, suffix = ''): string {
  if (typeof min === 'number' && typeof max === 'number') {
    return min === max ? `${field} ${verb} exactly ${unit(min)}${suffix}` : `${field} ${verb} between ${min} and ${unit(max)}${suffix}`;
  }
  if (typeof min === 'number') return `${field} ${verb} at least ${unit(min)}${suffix}`;
  return `${field} ${verb} at most ${unit(max as number)}${suffix}`;
}

const plural = (word: string, plural: string) => (n: number) => `${n} ${n === 1 ? word : plural}`;

/**
 * One deterministic, caller-facing sentence for an Ajv error, naming the field and the rule
 * (every 422 message names the field and the rule).
 */
export function describeSchemaError(rootId: string, error: ErrorObject): string {
  const field = formatFieldPath(error.instancePath);
  const schema = subschemaAt(rootId, error.instancePath) ?? {};
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${schemaErrorField(error)} is required`;
    case 'additionalProperties': {
      const allowed = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
      return `${schemaErrorField(error)} is not allowed (allowed: ${allowed.join(', ')})`;
    }
    case 'type':
      return `${field} must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}`;
    case 'minimum':
    case 'maximum':
      return describeRange(field, schema.minimum, schema.maximum, String, 'must be');
    case 'minLength':
    case 'maxLength':
      return describeRange(field, schema.minLength, schema.maxLength, plural('character', 'characters'), 'must be', ' long');
    case 'minItems':
    case 'maxItems':
      return describeRange(field, schema.minItems, schema.maxItems, plural('item', 'items'), 'must have');
    case 'minProperties':
    case 'maxProperties':
      return describeRange(field, schema.minProperties, schema.maxProperties, plural('entry', 'entries'), 'must have');
    case 'pattern': {
      const rule = patternRuleOf(error) ?? `must match ${String(params.pattern)}`;
      if (error.propertyName !== undefined) return `${field} key ${JSON.stringify(error.propertyName)} ${rule}`;
      return `${field} ${rule}`;
    }
    case 'enum':
      return `${field} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${field === '' ? 'body' : field} ${error.message ?? 'is invalid'}`;
  }
}
