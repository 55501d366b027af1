import type { Logger } from '../logger/logger.js';

export type CrashKind = 'uncaughtException' | 'unhandledRejection';

/**
 * What a process does with an error nothing caught: one fatal line through the logger, then exit 1
 * (the supervisor starts it again; a process in an unknown state must not go on). Node's own
 * report is plain text on stderr with the error's message and stack as they are: a MongoDB
 * duplicate-key message carries the e-mail address or phone number it collided on, and that
 * text would skip the masking every other line gets.
 */
export function crashHandler(name: string, logger: Logger, kind: CrashKind, exit: (code: number) => void) {
  return (reason: unknown): void => {
    logger.fatal({ err: reason }, `${name} stopped on an error nothing handled (${kind})`);
    logger.flush();
    exit(1);
  };
}

/** Sends this process's uncaught exceptions and unhandled rejections through `crashHandler`. */
export function reportCrashes(name: string, logger: Logger): void {
  const exit = (code: number) => process.exit(code);
  process.on('uncaughtException', crashHandler(name, logger, 'uncaughtException', exit));
  process.on('unhandledRejection', crashHandler(name, logger, 'unhandledRejection', exit));
}
