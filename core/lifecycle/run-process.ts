import { ConfigError, loadConfig, type Config } from '../config/config.js';
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
  start(config, logger)
    .then((running) => exitOnSignals(running.shutdown, logger))
    .catch((err: unknown) => {
      logger.fatal({ err }, `${name} failed to start`);
      process.exit(1);
    });
}
