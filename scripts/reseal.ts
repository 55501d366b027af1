// `npm run reseal`: seals every value MongoDB keeps sealed (signing keys, the VAPID key, callback
// secrets, PLAIN OTPs, kept codes, delivery rows' codes, activation codes, push secrets, sealed
// idempotent answers) with the current OTP_ENCRYPTION_KEY, opening those a key of
// OTP_ENCRYPTION_KEYS_PREVIOUS sealed (core/sealing/reseal.ts). Safe while the service runs and
// to run again. Prints the counts as JSON on stdout, logs on stderr; exits 3 while a value is
// left (changed meanwhile: run it again; opened by no key: see the log), 0 when none is.
// `npm run reseal -- --check` writes nothing: it counts which key each value opens with and exits
// 3 while any value opens only with a previous key or with none (not yet safe to drop a key).
import { connectMongo } from '../core/platform/db/mongo-connection.js';
import { createLogger, maskContactsInText } from '../core/platform/logger/logger.js';
import { ConfigError } from '../core/platform/config/config.js';
import { readSettings } from '../core/platform/config/settings-reader.js';
import { checkStoreSeals, resealStore } from '../core/sealing/reseal.js';
import { encryptionKey, mongoUri } from './admin-cli/cli-support.js';

async function main(): Promise<number> {
  const { values, problems } = readSettings(process.env, ['LOG_LEVEL']);
  if (problems.length > 0) throw new ConfigError(problems);
  const logger = createLogger({ level: values.LOG_LEVEL, name: 'reseal', destination: process.stderr });
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--check');
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown.join(' ')} (only --check)`);
  const key = encryptionKey();
  const mongo = await connectMongo(mongoUri());
  try {
    if (args.includes('--check')) {
      const found = await checkStoreSeals(mongo, key, logger);
      process.stdout.write(JSON.stringify(found, null, 2) + '\n');
      return found.total.previousKey > 0 || found.total.unopenable > 0 ? 3 : 0;
    }
    const report = await resealStore(mongo, key, logger);
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    return report.total.changedMeanwhile > 0 || report.total.unopenable > 0 ? 3 : 0;
  } finally {
    await mongo.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Masked as log lines are: a unique-key error quotes the e-mail address or number it met.
    console.error('re-sealing failed:', maskContactsInText(err instanceof Error ? err.message : String(err)));
    process.exit(1);
  },
);
