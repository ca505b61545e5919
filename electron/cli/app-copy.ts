// A runnable copy of the compiled engine and CLI somewhere else: their JS, the `gpushare` entry point and the
// packages they need at run time, without the checkout's sources, renderer or native builds. For the device
// kit, and for multi-user tests whose users cannot read the checkout.
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../engine/paths.js';

/** What the engine and CLI require at run time. */
const RUNTIME_PACKAGES = ['ws', 'prom-client', 'sqlite3'];
/** sqlite3 needs only its JS and its built addon at run time (its other dependencies install it). */
const PACKAGE_PARTS: Record<string, { files: string[]; dependencies: string[] }> = {
  sqlite3: { files: ['package.json', 'lib', 'build/Release/node_sqlite3.node'], dependencies: ['bindings'] },
};
const DIST_TREES = ['dist/electron', 'dist/shared'];

function packageDependencies(root: string, name: string): string[] {
  const special = PACKAGE_PARTS[name];
  if (special) return special.dependencies;
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return Object.keys(manifest.dependencies ?? {});
}

/** The runtime packages and everything they depend on, each once. */
function runtimeClosure(root: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    packageDependencies(root, name).forEach(visit);
  };
  RUNTIME_PACKAGES.forEach(visit);
  return [...seen].sort();
}

function copyPackage(root: string, name: string, appDir: string): void {
  const from = join(root, 'node_modules', name);
  const to = join(appDir, 'node_modules', name);
  if (!existsSync(from)) throw new Error(`node_modules/${name} is missing: run \`npm ci\` first.`);
  const parts = PACKAGE_PARTS[name]?.files;
  if (!parts) {
    cpSync(from, to, { recursive: true, filter: (src) => !/\.(d\.ts|map|md)$/.test(src) });
    return;
  }
  for (const part of parts) {
    mkdirSync(dirname(join(to, part)), { recursive: true });
    cpSync(join(from, part), join(to, part), { recursive: true });
  }
}

/** Copies the compiled engine and CLI (and `extraTrees`, paths under the checkout) into appDir, which becomes a package root. */
export function copyApp(appDir: string, options: { extraTrees?: string[] } = {}): void {
  const root = packageRoot();
  for (const tree of [...DIST_TREES, ...(options.extraTrees ?? [])]) {
    if (!existsSync(join(root, tree))) throw new Error(`${tree} is missing: run \`npm run build\` first.`);
  }
  mkdirSync(appDir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
  writeFileSync(join(appDir, 'package.json'), JSON.stringify({ name: manifest.name, version: manifest.version, private: true, type: 'module' }, null, 2) + '\n');
  for (const tree of [...DIST_TREES, ...(options.extraTrees ?? [])]) cpSync(join(root, tree), join(appDir, tree), { recursive: true, filter: (src) => !/\.(map|test\.js)$/.test(src) });
  mkdirSync(join(appDir, 'electron', 'cli'), { recursive: true });
  copyFileSync(join(root, 'electron', 'cli', 'gpushare.js'), join(appDir, 'electron', 'cli', 'gpushare.js'));
  for (const name of runtimeClosure(root)) copyPackage(root, name, appDir);
}
