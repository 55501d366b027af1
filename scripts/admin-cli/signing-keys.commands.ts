import { rotateSigningKeys } from '../../core/auth/signing-key-rotation.js';
import { toRotationResponse } from '../../api/routes/admin-signing-keys.routes.js';
import { comments, encryptionKey, signingKeySettings, type Command } from './cli-support.js';

export const signingKeyCommands: Record<string, Command> = {
  // The API processes read the new keys within SIGNING_KEY_RELOAD_SECONDS (the CLI has no process to tell).
  'signing-keys rotate': async ({ services, options }) =>
    toRotationResponse(
      await rotateSigningKeys(
        { connection: services.connection, settings: signingKeySettings(), encryptionKey: encryptionKey(), activity: services.activity },
        { retireAtOnce: options['retire-at-once'] === true, comments: comments(options) },
      ),
    ),
};
