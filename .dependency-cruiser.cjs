// Import rules checked by `npm test` (npx depcruise). The layering is explained in docs/design.md.
const FOUNDATION = '^core/(config|errors|logger|schemas|batching|db|enterprises|crypto|project-root)';
const INFRASTRUCTURE = '^core/(queues|metrics|lifecycle)/';

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
      name: 'foundation-stays-down',
      severity: 'error',
      comment: 'Foundation folders of core/ import only each other.',
      from: { path: FOUNDATION },
      to: { path: '^core/', pathNot: FOUNDATION },
    },
    {
      name: 'infrastructure-stays-down',
      severity: 'error',
      comment: 'Queues, metrics and lifecycle import only foundation and each other, never a feature folder.',
      from: { path: INFRASTRUCTURE },
      to: { path: '^core/', pathNot: `${FOUNDATION}|${INFRASTRUCTURE}` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|\\.local)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
