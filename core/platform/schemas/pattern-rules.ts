import { loadSchemas } from './schema-registry.js';

/**
 * The schema keyword that words a `pattern` for people: a caller who sends a group name with a
 * comma reads `must not contain a comma, ...`, not the regular expression. It sits beside the
 * pattern it words, so the two change together, and /openapi.json shows it too.
 */
export const PATTERN_RULE_KEYWORD = 'x-pattern-rule';

let rules: Map<string, string> | undefined;

function collect(node: unknown, into: Map<string, string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, into);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  const { pattern } = schema;
  const rule = schema[PATTERN_RULE_KEYWORD];
  if (typeof pattern === 'string' && typeof rule === 'string') {
    const known = into.get(pattern);
    // Ajv's error names the pattern, not the schema it came from: one pattern has one wording.
    if (known !== undefined && known !== rule) throw new Error(`pattern ${pattern} is worded twice: "${known}" and "${rule}"`);
    into.set(pattern, rule);
  }
  for (const value of Object.values(schema)) collect(value, into);
}

/** The words for this pattern given by the schemas beside it, if any. */
export function patternRule(pattern: string): string | undefined {
  if (!rules) {
    const collected = new Map<string, string>();
    for (const schema of loadSchemas()) collect(schema, collected);
    rules = collected;
  }
  return rules.get(pattern);
}
