import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { readSettings } from '../../core/platform/config/settings-reader.js';
import type { SettingName, Settings } from '../../core/platform/config/settings.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { schemaViolation } from '../../api/middleware/validate-body.middleware.js';
import type { RotationSettings } from '../../core/auth/signing-key-rotation.js';
import type { CliServices } from './cli-root.js';
import { checkSealingKeyAtStart } from '../../core/sealing/sealing-key-check.js';
import { previousEncryptionKeys } from '../../core/crypto/otp-keys.js';
import { withPreviousKeys } from '../../core/crypto/previous-keys.js';
import { MongoUriError, mongoUriOrLocal } from '../mongo-uri-or-local.js';

/** A mistake in the command line: printed with exit code 2. */
export class UsageError extends Error {}

/** The options every command may read (parsed by node:util parseArgs). */
export interface CliOptions {
  name?: string;
  enterprise?: string;
  scopes?: string;
  'allowed-ips'?: string;
  'redirect-uris'?: string;
  'web-origins'?: string;
  public?: boolean;
  'third-party'?: boolean;
  /** Test mode on (create, patch) or off (patch, `--no-test`). */
  test?: boolean;
  'no-test'?: boolean;
  /** `userId:code,...` (the API's testCodes); "" empties the list. */
  'test-codes'?: string;
  description?: string;
  comments?: string;
  reason?: string;
  file?: string;
  to?: string;
  limit?: string;
  /** signing-keys rotate: end the replaced keys now. */
  'retire-at-once'?: boolean;
}

export interface CommandInput {
  /** Built once per run by the CLI's composition root (cli-root.ts). */
  services: CliServices;
  /** The positional argument after `<resource> <action>` (an id or a name). */
  arg: string | undefined;
  options: CliOptions;
}

export type Command = (input: CommandInput) => Promise<unknown>;

/** `a, b,,c` → `['a', 'b', 'c']`; an absent or empty option is the empty list. */
export const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}

/** The same check (and message) as the admin API's body validation for this schema. */
export function checkAgainstSchema(schemaId: string, body: unknown): void {
  const validate = getValidator(schemaId);
  if (!validate(body)) throw schemaViolation(validate.errors ?? []);
}

/** `?comments=` of the API: at most 1000 characters kept. */
export const comments = (options: CliOptions) => options.comments?.slice(0, 1000);

/** Local secrets `npm start` generated for this checkout, when there are any. */
function localSecrets(): Record<string, string> {
  const file = join(projectRoot, '.local', 'secrets.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
}

/** MONGODB_URI, or the database `npm start` uses on the local server it recorded. */
export function mongoUri(): string {
  try {
    return mongoUriOrLocal(process.env);
  } catch (err) {
    if (err instanceof MongoUriError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * The key that seals callback secrets: OTP_ENCRYPTION_KEY, else the one `npm start` generated
 * for this checkout. Without it a confidential client could get no callback secret, so the
 * command stops instead of creating a client whose callbacks cannot be signed. It opens, as the
 * service does, what OTP_ENCRYPTION_KEYS_PREVIOUS sealed (a rotation of the signing keys reads them).
 */
export function encryptionKey(): Buffer {
  const hex = setting('OTP_ENCRYPTION_KEY', { OTP_ENCRYPTION_KEY: process.env.OTP_ENCRYPTION_KEY || localSecrets().OTP_ENCRYPTION_KEY });
  if (!hex) throw new UsageError("OTP_ENCRYPTION_KEY is not set (the service's key; it seals the client's callback secret)");
  const previous = setting('OTP_ENCRYPTION_KEYS_PREVIOUS', process.env);
  return withPreviousKeys(Buffer.from(hex, 'hex'), previousEncryptionKeys(previous));
}

/**
 * encryptionKey(), once it has opened the server secrets the API processes sealed (as a worker
 * checks at start). A CLI given another key (a shell still holding the key a rotation dropped;
 * locally, .local/secrets.json's key beside the OTP_ENCRYPTION_KEY the service was started with)
 * would seal a callback secret no process opens, and the client's callbacks would all fail.
 */
export async function serviceSealingKey(services: CliServices): Promise<Buffer> {
  const key = encryptionKey();
  await checkSealingKeyAtStart(services.connection, key);
  return key;
}

/** CLIENT_SECRET_GRACE_SECONDS as the service reads it. */
export function clientSecretGraceSeconds(): number {
  return setting('CLIENT_SECRET_GRACE_SECONDS', process.env);
}

/** The settings a rotation of the signing keys depends on, as the service reads them (the same as the API processes'). */
export function signingKeySettings(): RotationSettings {
  const { values, problems } = readSettings(process.env, [
    'SIGNING_KEY_JWK',
    'ACCESS_TOKEN_SIGNING_ALG',
    'ACCESS_TOKEN_TTL_SECONDS',
    'SIGNING_KEY_RELOAD_SECONDS',
    'SIGN_IN_SESSION_TTL_SECONDS',
  ]);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return {
    signingKeyJwk: values.SIGNING_KEY_JWK,
    accessTokenSigningAlg: values.ACCESS_TOKEN_SIGNING_ALG,
    accessTokenTtlSeconds: values.ACCESS_TOKEN_TTL_SECONDS,
    signingKeyReloadSeconds: values.SIGNING_KEY_RELOAD_SECONDS,
    signIn: { sessionTtlSeconds: values.SIGN_IN_SESSION_TTL_SECONDS },
  };
}

/** One setting read and checked as the service reads it (core/platform/config/settings.ts); a bad value stops the command. */
function setting<K extends SettingName>(key: K, env: NodeJS.ProcessEnv): Settings[K] {
  const { values, problems } = readSettings(env, [key]);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return values[key];
}

/** Refuses a value the same way as the API's `?limit=`. */
export function limitOption(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,3}$/.test(value) || Number(value) < 1 || Number(value) > max) throw new ValidationError('[Invalid field limit]');
  return Number(value);
}
