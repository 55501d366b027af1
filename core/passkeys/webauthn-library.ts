import type * as WebAuthnServer from '@simplewebauthn/server';
import type { isoBase64URL as IsoBase64URL } from '@simplewebauthn/server/helpers';
import { loadOnFirstUse } from '../platform/load-on-first-use.js';

export interface WebAuthnLibrary {
  server: typeof WebAuthnServer;
  isoBase64URL: typeof IsoBase64URL;
}

// @simplewebauthn/server (with tsyringe and the @peculiar ASN.1/X.509 packages under it, about
// 250 files) is loaded on the first passkey ceremony, not at start: it holds about 3.4 MB of heap
// (6-7 MB resident) in the API process, which serves the OTP and token routes without it.
// Its helpers entry loads nearly the same graph, so both come together.
export const loadWebAuthn = loadOnFirstUse((): Promise<WebAuthnLibrary> =>
  Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')]).then(([server, helpers]) => ({
    server,
    isoBase64URL: helpers.isoBase64URL,
  })),
);
