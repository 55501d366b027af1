// ESM + ts-jest set-up: oidc-provider is ESM-only.
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  // `./x.js` imports of TypeScript sources resolve to `./x.ts`; a package's `x.json.js` (libphonenumber-js's
  // metadata as a module) is a real file and must not become its `.json`.
  moduleNameMapper: { '^(\\.{1,2}/(?!.*\\.json\\.js$).*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
};

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    {
      // The client library compiles against the browser's types (DOM), as apps that use it do.
      // Its tests need no service (their HTTP servers are their own), so they run in `npm run test:unit`.
      ...shared,
      displayName: 'sdk',
      testMatch: ['<rootDir>/sdk/test/**/*.test.ts'],
      transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'sdk/tsconfig.test.json' }] },
    },
  ],
  testTimeout: 30000,
  // Jest's ESM module registries are not all freed between test files (a known leak of
  // --experimental-vm-modules): in band, one process grew to V8's heap limit over the suite. With a
  // limit, even one worker runs apart from Jest's own process and is replaced once its heap passes it.
  workerIdleMemoryLimit: '2GB',
};
