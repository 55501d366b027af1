import { isLoopbackHost } from '../loopback-host.js';
import type { Config } from './config.js';

/**
 * NODE_ENV defaults to `development`, which serves the demo approver app, lets callbacks and push
 * endpoints reach loopback, and starts without the production secrets: right for `npm start`,
 * wrong for a Procfile line run as is on a server. Such a process says so at start when it serves
 * an address other machines reach and nobody chose the mode.
 */
export function developmentModeWarning(raw: NodeJS.ProcessEnv, config: Pick<Config, 'nodeEnv' | 'publicUrl'>): string | undefined {
  if (raw.NODE_ENV !== undefined || config.nodeEnv !== 'development') return undefined;
  // Only this machine reaches a loopback PUBLIC_URL: a development run is expected there.
  if (isLoopbackHost(new URL(config.publicUrl).hostname)) return undefined;
  return (
    `NODE_ENV is not set, so this process runs in development mode although PUBLIC_URL is ${config.publicUrl}: ` +
    'the demo approver app is served, callbacks and push may reach loopback, and secrets are not required. ' +
    'Set NODE_ENV=production on servers.'
  );
}
