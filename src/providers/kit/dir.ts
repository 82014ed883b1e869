import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LoadedProvider, ProviderSet } from '../index.js';
import { loadManifest } from './load.js';
import { kitProvider } from './provider.js';

// The manifests of a config's `providers.dir`: every *.yaml (or *.yml) file in it, each loaded on
// its own. A file that does not load is refused with its reason and the others load; when the same
// file loaded before (`inForce`), its previous version stays in force, so an edit that breaks a
// manifest never takes its provider away from running channels.

export class ProviderDirError extends Error {}

/** The manifest files of a directory, by name. */
export function manifestFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new ProviderDirError(`cannot read the directory ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return names
    .filter((n) => /\.ya?ml$/i.test(n) && !n.startsWith('.'))
    .sort()
    .map((n) => resolve(join(dir, n)));
}

export function loadProviderDir(dir: string, inForce: ProviderSet, isBuiltIn: (type: string) => boolean): ProviderSet {
  const loaded = new Map<string, LoadedProvider>();
  const refused: { file: string; error: string; kept?: string }[] = [];
  const broken: { file: string; error: string }[] = [];
  for (const file of manifestFiles(dir)) {
    try {
      const m = loadManifest(file);
      if (isBuiltIn(m.type)) throw new Error(`${file}: type: "${m.type}" is a built-in provider type; give the manifest another type name`);
      const other = loaded.get(m.type);
      if (other) throw new Error(`${file}: type: "${m.type}" is already declared by ${other.file}`);
      loaded.set(m.type, { provider: kitProvider(m), file, manifest: m });
    } catch (err) {
      broken.push({ file, error: (err as Error).message });
    }
  }
  for (const b of broken) {
    const previous = [...inForce.loaded.entries()].find(([, l]) => l.file === b.file);
    if (previous && !loaded.has(previous[0])) {
      loaded.set(previous[0], previous[1]);
      refused.push({ ...b, kept: previous[0] });
    } else refused.push(b);
  }
  return { loaded, refused };
}
