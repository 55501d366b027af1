import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { developmentModeWarning } from '../config/development-mode.js';
import { createLogger, type Logger } from '../logger/logger.js';
import { exitOnSignals } from './shutdown.js';

/** Reads the configuration, or stops the process with one message naming every bad key. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
}

/** Entry of one Procfile process: config, logger, start, then SIGTERM/SIGINT handling. */
export function runProcess(name: string, start: (config: Config, logger: Logger) => Promise<{ shutdown: () => Promise<boolean> }>): void {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, name });
  const modeWarning = developmentModeWarning(process.env, config);
  if (modeWarning) logger.warn(modeWarning);
  const running = start(config, logger);
  // Listening from the first moment: a SIGTERM while the process is still starting (a deploy, a
  // scale-down) waits for the start to finish and then shuts down cleanly, instead of the signal's
  // default action killing a half-started process.
  exitOnSignals(() => running.then((r) => r.shutdown()), logger);
  running.catch((err: unknown) => {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  });
}
