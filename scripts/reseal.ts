// `npm run reseal`: seals every value MongoDB keeps sealed (signing keys, the VAPID key, callback
// secrets, PLAIN OTPs, kept codes, delivery rows' codes, activation codes, push secrets, sealed
// idempotent answers) with the current OTP_ENCRYPTION_KEY, opening those a key of
// OTP_ENCRYPTION_KEYS_PREVIOUS sealed (core/sealing/reseal.ts). Safe while the service runs and
// to run again. Prints the counts as JSON on stdout, logs on stderr; exits 3 while a value is
// left (changed meanwhile: run it again; opened by no key: see the log), 0 when none is.
import { connectMongo } from '../core/platform/db/mongo-connection.js';
import { createLogger } from '../core/platform/logger/logger.js';
import { ConfigError } from '../core/platform/config/config.js';
import { readSettings } from '../core/platform/config/settings-reader.js';
import { resealStore } from '../core/sealing/reseal.js';
import { encryptionKey, mongoUri } from './admin-cli/cli-support.js';

async function main(): Promise<number> {
  const { values, problems } = readSettings(process.env, ['LOG_LEVEL']);
  if (problems.length > 0) throw new ConfigError(problems);
  const logger = createLogger({ level: values.LOG_LEVEL, name: 'reseal', destination: process.stderr });
  const key = encryptionKey();
  const mongo = await connectMongo(mongoUri());
  try {
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
    console.error('re-sealing failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
