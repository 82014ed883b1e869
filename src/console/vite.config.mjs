// Builds the console (src/console) into dist/console-web, served by the gateway at /console.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  // No inline module-preload polyfill script: the CSP allows scripts from files only.
  build: { outDir: fileURLToPath(new URL('../../dist/console-web', import.meta.url)), emptyOutDir: true, modulePreload: { polyfill: false }, assetsInlineLimit: 0, reportCompressedSize: false },
});
