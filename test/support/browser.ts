import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's headless Chromium, with the flags this machine needs: no sandbox as root, and no
 * background networking (the network is closed; Chromium would keep retrying Google's hosts).
 * Playwright gives each launch a fresh, empty profile.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
