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
      comment: 'Providers never touch the store, routes, tasks or the relay.',
      from: { path: '^src/providers/' },
      to: { path: '^src/(store|routes|tasks|relay)/' },
    },
    {
      name: 'routes-never-reach-providers',
      severity: 'error',
      comment: 'Routes reach a provider only through relay/ (or tasks/); they may name the neutral capability types (providers/*-types.ts).',
      from: { path: '^src/routes/' },
      to: { path: '^src/providers/', pathNot: ['^src/providers/[a-z-]+-types\\.ts$'] },
    },
    { name: 'formats-stay-below', severity: 'error', from: { path: '^src/formats/' }, to: { path: '^src/(routes|store)/' } },
    {
      name: 'simulator-stands-apart',
      severity: 'error',
      comment: 'The simulator imports nothing of the gateway but shared wire facts.',
      from: { path: '^src/simulator/' },
      to: { path: '^src/', pathNot: ['^src/simulator/', '^src/providers/[^/]+/wire\\.ts$', '^src/http/image-type\\.ts$', '^src/config/schema\\.ts$'] },
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
