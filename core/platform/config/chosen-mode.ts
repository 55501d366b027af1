import type { Config } from './config.js';

/**
 * NODE_ENV, when unset, follows PUBLIC_URL: development on this machine, production once other
 * machines reach the process (see the settings table). A server that did not choose says at start
 * which mode it took and why, so an operator who expected development learns where it came from.
 */
export function chosenModeNote(raw: NodeJS.ProcessEnv, config: Pick<Config, 'nodeEnv' | 'publicUrl'>): string | undefined {
  if (raw.NODE_ENV || config.nodeEnv !== 'production') return undefined;
  return (
    `NODE_ENV is not set, so this process runs in production mode because PUBLIC_URL (${config.publicUrl}) is reached ` +
    'from other machines: the production secrets are required, the demo approver app is off, callbacks and push ' +
    'never reach loopback. Set NODE_ENV=development to run otherwise.'
  );
}
