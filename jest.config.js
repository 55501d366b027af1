// ESM + ts-jest set-up: oidc-provider is ESM-only.
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
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
};
