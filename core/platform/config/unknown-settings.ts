import { SETTINGS } from './settings.js';

/**
 * Families of settings: a first word that at least three settings share. An environment variable
 * starting with one (`RATE_LIMIT_OTP_PER_CLEINT`, `NOTIFICATION_CALLBAK_TIMEOUT_MS`) is meant for
 * this service. Left out: REDIS and MONGODB (Kubernetes adds `REDIS_PORT`, `REDIS_SERVICE_HOST`
 * … for a service of that name), and TWILIO and SENDGRID (their SDKs read variables of their own,
 * e.g. `TWILIO_EDGE`): for those, only a near miss of a setting's name counts.
 */
const SHARED_WORDS = new Set(['REDIS', 'MONGODB', 'TWILIO', 'SENDGRID']);
const FAMILY_SIZE = 3;
/** Shorter names are too easily one or two letters from another word. */
const NEAR_MISS_MIN_LENGTH = 8;
const NEAR_MISS_DISTANCE = 2;

const declared: ReadonlySet<string> = new Set(Object.keys(SETTINGS));

const families: readonly string[] = (() => {
  const counts = new Map<string, number>();
  for (const name of declared) {
    const word = name.split('_')[0] ?? name;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts].filter(([word, count]) => count >= FAMILY_SIZE && !SHARED_WORDS.has(word)).map(([word]) => `${word}_`);
})();

/** Edit distance (insertions, deletions, substitutions, swaps of neighbours), given up past `limit`. */
function withinDistance(a: string, b: string, limit: number): boolean {
  if (Math.abs(a.length - b.length) > limit) return false;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return false;
    before = previous;
    previous = current;
  }
  return (previous[b.length] ?? Infinity) <= limit;
}

/** The declared setting a variable name nearly spells, if any. */
function nearMissOf(name: string): string | undefined {
  if (name.length < NEAR_MISS_MIN_LENGTH) return undefined;
  for (const setting of declared) if (withinDistance(name, setting, NEAR_MISS_DISTANCE)) return setting;
  return undefined;
}

/** An environment variable that looks meant for this service but is no setting of it: ignored, so said at start. */
export interface UnknownSetting {
  name: string;
  /** The setting it nearly spells, when it is a near miss. */
  nearest?: string;
}

/**
 * The variables of `env` that look like settings of this service and are not: a near miss of a
 * setting's name, or a name in one of the settings' families. Names only: values are never read.
 */
export function unknownSettings(env: NodeJS.ProcessEnv): UnknownSetting[] {
  const found: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (declared.has(name)) continue;
    const nearest = nearMissOf(name);
    if (nearest !== undefined) found.push({ name, nearest });
    else if (families.some((family) => name.startsWith(family))) found.push({ name });
  }
  return found;
}

/** The start-up warning for one of them. */
export function unknownSettingWarning({ name, nearest }: UnknownSetting): string {
  return nearest === undefined
    ? `${name} is not a setting of this service and is ignored (see docs/configuration.md for the settings)`
    : `${name} is not a setting of this service and is ignored: did you mean ${nearest}?`;
}
