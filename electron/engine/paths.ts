import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | null = null;

/** The checkout or installed package root: the nearest package.json named "gpushare" above this file. */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'gpushare') {
      cachedRoot = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Could not find the gpushare package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** The built native parts; GPUSHARE_NATIVE_DIR points elsewhere (a copy other users can read, in multi-user tests). */
export const nativeDir = (): string => process.env.GPUSHARE_NATIVE_DIR || join(packageRoot(), 'native');
export const fakegpuBuildDir = (): string => join(nativeDir(), 'fakegpu', 'build');
export const nvmlAddonPath = (): string => join(packageRoot(), 'native', 'nvml', 'build', 'Release', 'gpushare_nvml.node');

/** Per-user runtime directory for sockets and simulated-driver state. */
export function runtimeDir(): string {
  const uid = process.getuid?.() ?? 0;
  return process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, 'gpushare') : join('/tmp', `gpushare-${uid}`);
}
