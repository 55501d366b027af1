import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { projectRoot } from '../project-root.js';

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;

export const schemasDir = join(projectRoot, 'schemas');

export type JsonSchema = Record<string, unknown> & { $id: string };

function listJsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return listJsonFiles(full);
    return entry.name.endsWith('.json') ? [full] : [];
  });
}

let loaded: JsonSchema[] | undefined;

/** Every JSON Schema under schemas/, keyed by `$id` (= file name). Read once per process. */
export function loadSchemas(): JsonSchema[] {
  loaded ??= listJsonFiles(schemasDir).map((file) => JSON.parse(readFileSync(file, 'utf8')) as JsonSchema);
  return loaded;
}

let ajvInstance: InstanceType<typeof Ajv> | undefined;

/** One Ajv instance for the whole process, compiling every schema at first use (boot). */
export function getAjv(): InstanceType<typeof Ajv> {
  if (!ajvInstance) {
    const ajv = new Ajv({ allErrors: false, strict: true, useDefaults: false, discriminator: true });
    addFormats(ajv);
    ajv.addKeyword('example');
    // Words for people beside a pattern (pattern-rules.ts); an annotation, validates nothing.
    ajv.addKeyword('x-pattern-rule');
    for (const schema of loadSchemas()) ajv.addSchema(schema);
    ajvInstance = ajv;
  }
  return ajvInstance;
}

export function getValidator<T = unknown>(id: string): ValidateFunction<T> {
  const validate = getAjv().getSchema<T>(id);
  if (!validate) throw new Error(`Unknown schema ${id}`);
  return validate;
}

export type { ErrorObject };
