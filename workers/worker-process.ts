import { ConfigError, loadConfig, type Config } from '../core/config/config.js';
import { exitOnSignals } from '../core/lifecycle/shutdown.js';
import { createLogger, type Logger } from '../core/logger/logger.js';

/** Entry of one Procfile worker process: config, logger, start, signal handling. */
export function runWorkerProcess(name: string, start: (config: Config, logger: Logger) => Promise<{ shutdown: () => Promise<boolean> }>): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
  const logger = createLogger({ level: config.logLevel, name: `worker-${name}` });
  start(config, logger)
    .then((running) => exitOnSignals(running.shutdown, logger))
    .catch((err: unknown) => {
      logger.fatal({ err }, `${name} worker failed to start`);
      process.exit(1);
    });
}
