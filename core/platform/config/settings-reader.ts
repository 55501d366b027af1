// Reads settings from the environment by the table in settings.ts: defaults, the JSON Schema
// check (Ajv coerces numbers), the checks a schema cannot say, and the production-only
// requirements. Every problem is named `KEY: what is wrong`.
import AjvModule, { type ErrorObject } from 'ajv';
import { schemaErrorField, schemaErrorLine } from '../schemas/schema-error-message.js';
import type { SettingDeclaration } from './setting-declaration.js';
import { SETTINGS, type SettingName, type Settings } from './settings.js';

const Ajv = AjvModule.default;

const REQUIRED_IN_PRODUCTION = ': is required in production';

/** `run`: a process of the service starting (every `requiredToRun` key asked); `read`: a test or tool reading. */
export type SettingsPurpose = 'run' | 'read';

const ALL = Object.keys(SETTINGS) as SettingName[];
const declarationOf = (key: string): SettingDeclaration | undefined => (SETTINGS as Record<string, SettingDeclaration>)[key];

function propertySchema(declaration: SettingDeclaration): Record<string, unknown> {
  switch (declaration.kind) {
    case 'integer':
      return {
        type: 'integer',
        ...(declaration.min === undefined ? {} : { minimum: declaration.min }),
        ...(declaration.max === undefined ? {} : { maximum: declaration.max }),
      };
    case 'enum':
      return { enum: [...declaration.values] };
    case 'switch':
      return { enum: ['on', 'off'] };
    case 'string':
      return {
        type: 'string',
        ...(declaration.pattern === undefined ? {} : { pattern: declaration.pattern }),
        ...(declaration.minLength === undefined ? {} : { minLength: declaration.minLength }),
        ...(declaration.maxLength === undefined ? {} : { maxLength: declaration.maxLength }),
      };
  }
}

/** The JSON Schema of the given settings (all by default), as the environment is checked against it. */
export function settingsSchema(keys: readonly SettingName[] = ALL) {
  const declarations = keys.map((key) => [key, SETTINGS[key] as SettingDeclaration] as const);
  return {
    type: 'object',
    additionalProperties: true,
    required: declarations.filter(([, d]) => d.required).map(([key]) => key),
    properties: Object.fromEntries(declarations.map(([key, d]) => [key, propertySchema(d)])),
  };
}

/** The environment's values of `keys`, empty ones unset, defaults filled in (plain ones before derived ones). */
function withDefaults(env: NodeJS.ProcessEnv, keys: readonly SettingName[]): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const key of keys) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const key of keys) {
    const fallback = (SETTINGS[key] as SettingDeclaration).default;
    if (raw[key] === undefined && fallback !== undefined && typeof fallback !== 'function') raw[key] = String(fallback);
  }
  for (const key of keys) {
    const fallback = (SETTINGS[key] as SettingDeclaration).default;
    if (raw[key] === undefined && typeof fallback === 'function') raw[key] = fallback({ ...env, ...raw });
  }
  return raw;
}

function schemaProblem(error: ErrorObject): string {
  const key = schemaErrorField(error);
  const declaration = declarationOf(key);
  // A pattern says nothing to an operator; the declaration says in words what it accepts.
  if (error.keyword === 'pattern' && declaration?.kind === 'string' && declaration.format) return `${key}: must be ${declaration.format}`;
  return schemaErrorLine(error, '(configuration)');
}

/**
 * Reads and validates `keys` (every setting by default). The values are typed as `Settings`
 * but only meaningful when `problems` is empty; a caller that reads only some keys reads only those.
 */
export function readSettings(
  env: NodeJS.ProcessEnv,
  keys: readonly SettingName[] = ALL,
  purpose: SettingsPurpose = 'read',
): { values: Settings; problems: string[] } {
  const raw: Record<string, unknown> = withDefaults(env, keys);
  const validate = new Ajv({ allErrors: true, coerceTypes: true, strict: true }).compile(settingsSchema(keys));
  const problems = validate(raw) ? [] : (validate.errors ?? []).map(schemaProblem);
  for (const key of keys) {
    const declaration = SETTINGS[key] as SettingDeclaration;
    const value = raw[key];
    if (declaration.check && typeof value === 'string') problems.push(...declaration.check(value).map((problem) => `${key}: ${problem}`));
    if (declaration.requiredToRun && value === undefined && purpose === 'run')
      problems.push(`${key}: is required by every process, in every mode (\`npm start\` generates it)`);
    else if ((declaration.requiredInProduction || declaration.requiredToRun) && value === undefined && raw.NODE_ENV === 'production')
      problems.push(`${key}${REQUIRED_IN_PRODUCTION}`);
    if (declaration.kind === 'switch' && value !== undefined) raw[key] = value === 'on';
  }
  // Production came from PUBLIC_URL, not from the operator: name where it came from beside the
  // secrets it requires, so the fix for a local run is as plain as the fix for a server.
  if (!env.NODE_ENV && raw.NODE_ENV === 'production' && problems.some((problem) => problem.endsWith(REQUIRED_IN_PRODUCTION)))
    problems.push(
      'NODE_ENV: is not set, so production because PUBLIC_URL is reached from other machines (set the secrets, or NODE_ENV=development for a local run)',
    );
  return { values: raw as Settings, problems };
}
