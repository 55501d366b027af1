// Import rules checked by `npm test` (npx depcruise). The layering is explained in docs/design.md.
// core/platform/ is the foundation every feature stands on; core/crypto is shared by features and
// stands only on the platform. Everything else in core/ is a feature folder.
const PLATFORM = '^core/platform/';
const PLATFORM_LEAVES =
  '^core/platform/(config|errors|logger|schemas|batching|db|tenancy|project-root|loopback-host|phone-numbers|locales)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Import cycles between files make load order and ownership unclear.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'api-not-workers',
      severity: 'error',
      comment: 'api/ never imports workers/: they are separate processes.',
      from: { path: '^api/' },
      to: { path: '^workers/' },
    },
    {
      name: 'workers-not-api',
      severity: 'error',
      comment: 'workers/ never imports api/: they are separate processes.',
      from: { path: '^workers/' },
      to: { path: '^api/' },
    },
    {
      name: 'core-not-entries',
      severity: 'error',
      comment: 'core/ imports from no entry folder.',
      from: { path: '^core/' },
      to: { path: '^(api|workers|scripts|test|bench|sdk)/' },
    },
    {
      name: 'core-speaks-no-http',
      severity: 'error',
      comment: 'core/ knows nothing of Express: requests and responses belong to api/.',
      from: { path: '^core/' },
      to: { path: 'node_modules/(express|@types/express)/' },
    },
    {
      name: 'sdk-stands-alone',
      severity: 'error',
      comment: 'The client library is published on its own: it imports only its own files and packages.',
      from: { path: '^sdk/' },
      to: { path: '^(api|core|workers|scripts|test|bench)/' },
    },
    {
      name: 'platform-stays-down',
      severity: 'error',
      comment: 'core/platform/ imports nothing from the feature folders of core/ (nor core/crypto).',
      from: { path: PLATFORM },
      to: { path: '^core/', pathNot: PLATFORM },
    },
    {
      name: 'platform-leaves-stay-down',
      severity: 'error',
      comment:
        'Config, errors, logging, schemas, batching, db, tenancy and the loopback rule import only each other: queues, metrics, throttling and lifecycle build on them.',
      from: { path: PLATFORM_LEAVES },
      to: { path: '^core/', pathNot: PLATFORM_LEAVES },
    },
    {
      name: 'crypto-on-platform-only',
      severity: 'error',
      comment: 'core/crypto is shared by features, so it imports only core/platform/.',
      from: { path: '^core/crypto/' },
      to: { path: '^core/', pathNot: `${PLATFORM}|^core/crypto/` },
    },
    {
      name: 'heavy-libraries-on-first-use',
      severity: 'error',
      comment:
        'libvips (sharp), the passkey library, web-push and the queue dashboard (bull-board) are loaded with `await import` where first used (types may be imported): each adds megabytes of start-up memory to processes that mostly never use it.',
      from: { path: '^(api|core|workers)/' },
      to: {
        path: 'node_modules/(sharp|@simplewebauthn/server|web-push|@bull-board/[^/]+)/',
        dependencyTypesNot: ['type-only', 'dynamic-import'],
      },
    },
    {
      name: 'phone-metadata-on-first-use',
      severity: 'error',
      comment:
        'libphonenumber-js is reached only through core/platform/phone-numbers.ts, which requires it on first use: a static import would load its metadata in every process that reads the configuration, and a second entrance would load a second copy.',
      from: { path: '^(api|core|workers)/', pathNot: '^core/platform/phone-numbers[.]ts$' },
      to: { path: 'node_modules/libphonenumber-js/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|\\.local)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
