/** Passkeys (WebAuthn): who the relying party is and which pages may speak for it. */
export interface PasskeyConfig {
  /** The relying party id: a host name; passkeys are bound to it by the authenticator. */
  readonly rpId: string;
  /** Origins (scheme://host[:port]) of the pages that may register and use passkeys. */
  readonly origins: readonly string[];
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether `host` is the relying party id itself or one of its subdomains (WebAuthn's scoping rule). */
function isWithin(host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`);
}

/**
 * PASSKEY_RP_ID (default: the host of PUBLIC_URL) and PASSKEY_ORIGINS (default: the origin of
 * PUBLIC_URL, where the sign-in pages and the example app live). Set values are checked: every
 * origin must be https (or http on a local host) and lie within the relying party id, which
 * browsers enforce anyway, so a setting they would refuse stops the process at start instead of
 * failing every ceremony. The defaults are taken as they are (a plain-http PUBLIC_URL keeps
 * starting; browsers then offer no passkeys there).
 */
export function readPasskeyConfig(raw: Record<string, unknown>): { config: PasskeyConfig; problems: string[] } {
  let publicUrl: URL;
  try {
    publicUrl = new URL(String(raw.PUBLIC_URL));
  } catch {
    // PUBLIC_URL itself is reported by the schema check.
    return { config: Object.freeze({ rpId: '', origins: [] }), problems: [] };
  }
  const rpId = ((raw.PASSKEY_RP_ID as string | undefined) ?? publicUrl.hostname).toLowerCase();
  const listed =
    raw.PASSKEY_ORIGINS === undefined
      ? [publicUrl.origin]
      : String(raw.PASSKEY_ORIGINS)
          .split(',')
          .map((o) => o.trim());
  const problems: string[] = [];
  const origins: string[] = [];
  if (raw.PASSKEY_RP_ID === undefined && raw.PASSKEY_ORIGINS === undefined)
    return { config: Object.freeze({ rpId, origins: listed }), problems };
  for (const value of listed.filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push(`PASSKEY_ORIGINS: ${value} is not an origin (scheme://host[:port])`);
      continue;
    }
    if (url.origin !== value.replace(/\/$/, '')) problems.push(`PASSKEY_ORIGINS: ${value} is not an origin (no path, query or fragment)`);
    else if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname)))
      problems.push(`PASSKEY_ORIGINS: ${value} must be https (http only on localhost)`);
    else if (!isWithin(url.hostname, rpId)) problems.push(`PASSKEY_ORIGINS: ${value} is not within PASSKEY_RP_ID ${rpId}`);
    else origins.push(url.origin);
  }
  if (origins.length === 0 && problems.length === 0) problems.push('PASSKEY_ORIGINS: must name at least one origin');
  return { config: Object.freeze({ rpId, origins: Object.freeze(origins) }), problems };
}
