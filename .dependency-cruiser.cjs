/* global module */
/** Layer rules of mediagate's source (run by `npm run lint`). */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'Import cycles hide the layering.', from: {}, to: { circular: true } },
    {
      name: 'upstream-is-the-ground-floor',
      severity: 'error',
      comment: 'The transport imports nothing of the gateway above it (config types only).',
      from: { path: '^src/upstream/' },
      to: { path: '^src/', pathNot: ['^src/upstream/', '^src/config/schema\\.ts$'] },
    },
    {
      name: 'providers-stay-below',
      severity: 'error',
      comment: 'Providers never touch the store, routes, tasks, the relay or the config loader built on their registry.',
      from: { path: '^src/providers/' },
      to: { path: '^src/(store|routes|tasks|relay|config-file)/' },
    },
    {
      name: 'routes-never-reach-providers',
      severity: 'error',
      comment: 'Routes reach a provider only through relay/ (or tasks/); they may name the neutral capability types (providers/*-types.ts).',
      from: { path: '^src/routes/' },
      to: { path: '^src/providers/', pathNot: ['^src/providers/[a-z-]+-types\\.ts$'] },
    },
    {
      name: 'formats-stay-below',
      severity: 'error',
      comment: 'Client formats sit beside the providers, not above them: wire helpers both need live in src/wire/.',
      from: { path: '^src/formats/' },
      to: { path: '^src/(routes|store|providers)/' },
    },
    {
      name: 'config-schema-is-ground',
      severity: 'error',
      comment: 'config/ holds the schema every floor reads; the loader and embedded default, built from the provider registry, live in config-file/ above it.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/config/' },
    },
    {
      name: 'store-stays-below',
      severity: 'error',
      comment: 'The store imports only ground-floor facts (ids, the config schema, http errors); keys, limits and tasks are built on it.',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: ['^src/store/', '^src/ids\\.ts$', '^src/config/schema\\.ts$', '^src/http/'] },
    },
    {
      name: 'relay-stays-below-tasks',
      severity: 'error',
      comment: 'The relay (chat, images) sits under the video task layer; what both need, such as object storage, lives below both.',
      from: { path: '^src/relay/' },
      to: { path: '^src/tasks/' },
    },
    {
      name: 'storage-stays-below',
      severity: 'error',
      comment: 'Object storage (local folder, S3) imports only the config schema and http helpers.',
      from: { path: '^src/storage/' },
      to: { path: '^src/', pathNot: ['^src/storage/', '^src/config/schema\\.ts$', '^src/http/'] },
    },
    {
      name: 'telemetry-stays-below',
      severity: 'error',
      comment: 'Spans and metrics are helpers every floor may call: telemetry imports only the config schema and http helpers.',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/', pathNot: ['^src/telemetry/', '^src/config/schema\\.ts$', '^src/http/'] },
    },
    {
      name: 'ground-floor-modules',
      severity: 'error',
      comment: 'Id helpers and shared wire helpers import nothing of the gateway, so any floor may use them.',
      from: { path: '^src/(ids\\.ts$|wire/)' },
      to: { path: '^src/', pathNot: '^src/wire/' },
    },
    {
      name: 'simulator-stands-apart',
      severity: 'error',
      comment: 'The simulator imports nothing of the gateway but shared wire facts.',
      from: { path: '^src/simulator/' },
      to: { path: '^src/', pathNot: ['^src/simulator/', '^src/wire/', '^src/providers/[^/]+/wire\\.ts$', '^src/http/image-type\\.ts$', '^src/config/schema\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count too: a cycle of types is still a knot in the layering.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
