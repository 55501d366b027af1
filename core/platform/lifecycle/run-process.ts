import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { chosenModeNote } from '../config/chosen-mode.js';
import { unknownSettings, unknownSettingWarning } from '../config/unknown-settings.js';
import { createLogger, type Logger } from '../logger/logger.js';
import { reportCrashes } from './crash-report.js';
import { exitOnSignals } from './shutdown.js';
import { StartCancelledError } from './start-cancel.js';

/** Reads the configuration for a starting process, or stops it with one message naming every bad key. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env, 'run');
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
}

export type ProcessStart = (config: Config, logger: Logger, stopping: AbortSignal) => Promise<{ shutdown: () => Promise<boolean> }>;

/** Entry of one Procfile process: config, logger, start, then SIGTERM/SIGINT handling. */
export function runProcess(name: string, start: ProcessStart): void {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, name });
  reportCrashes(name, logger);
  const modeNote = chosenModeNote(process.env, config);
  if (modeNote) logger.info(modeNote);
  // A mistyped setting would run with its default, unnoticed: each is named (never its value).
  for (const unknown of unknownSettings(process.env)) logger.warn(unknownSettingWarning(unknown));
  const stopping = new AbortController();
  const running = start(config, logger, stopping.signal);
  // Listening from the first moment, instead of the signal's default action killing a
  // half-started process. A SIGTERM while the start still waits for Redis (a deploy, a
  // scale-down) gives the start up at once: what it had opened is closed, and it exits 0. Past
  // that wait the start is short: it finishes, then the process shuts down cleanly.
  exitOnSignals(async () => {
    stopping.abort();
    const started = await running.catch((err: unknown) => {
      if (err instanceof StartCancelledError) return undefined;
      throw err;
    });
    return started ? started.shutdown() : true;
  }, logger);
  running.catch((err: unknown) => {
    if (err instanceof StartCancelledError) {
      logger.info(err.message);
      return;
    }
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  });
}
