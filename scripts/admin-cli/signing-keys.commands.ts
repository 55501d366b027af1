import { pino } from 'pino';
import { rotateSigningKeys } from '../../core/auth/signing-key-rotation.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import { toRotationResponse } from '../../api/routes/admin-signing-keys.routes.js';
import { comments, encryptionKey, signingKeySettings, type Command } from './cli-support.js';
import { announceSigningKeyChange } from './key-change-notice.js';

export const signingKeyCommands: Record<string, Command> = {
  'signing-keys rotate': async ({ services, options }) => {
    const settings = signingKeySettings();
    const rotation = await rotateSigningKeys(
      {
        connection: services.connection,
        secrets: services.serverSecrets,
        settings,
        encryptionKey: encryptionKey(),
        activity: services.activity,
        // On the terminal's error output (stdout carries the answer): the rotation stands, its entry is owed.
        logger: createLogger({ level: 'warn', name: 'admin-cli', destination: pino.destination({ dest: 2, sync: true }) }),
      },
      { retireAtOnce: options['retire-at-once'] === true, comments: comments(options) },
    );
    // The API processes read the new keys at once when told through Redis, else at their next read.
    const notTold = await announceSigningKeyChange();
    if (notTold)
      process.stderr.write(
        `The API processes were not told (${notTold}): they read the new keys within SIGNING_KEY_RELOAD_SECONDS (${settings.signingKeyReloadSeconds} s)\n`,
      );
    return toRotationResponse(rotation);
  },
};
