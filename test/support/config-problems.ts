import { ConfigError, loadConfig } from '../../core/platform/config/config.js';

/** What the configuration check refuses in `env` (empty when it loads), as a process would print it. */
export function configProblems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}
