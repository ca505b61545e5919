import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lookupAccount } from './accounts.js';

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

/**
 * A path under the packaged app's app.asar, moved to app.asar.unpacked where electron-builder puts the
 * asarUnpack files: dlopen, exec and LD_PRELOAD need real files. Unchanged in a checkout.
 */
export const outsideAsar = (path: string): string => path.replace(/([\\/])app\.asar(?=[\\/]|$)/, '$1app.asar.unpacked');

/** The built native parts; GPUSHARE_NATIVE_DIR points elsewhere (a copy other users can read, in multi-user tests). */
export const nativeDir = (): string => process.env.GPUSHARE_NATIVE_DIR || outsideAsar(join(packageRoot(), 'native'));
export const fakegpuBuildDir = (): string => join(nativeDir(), 'fakegpu', 'build');
export const nvmlAddonPath = (): string => outsideAsar(join(packageRoot(), 'native', 'nvml', 'build', 'Release', 'gpushare_nvml.node'));

/** Per-user runtime directory for sockets and simulated-driver state (check it with privateRuntimeDir before use). */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env, tmpRoot = '/tmp'): string {
  const uid = process.getuid?.() ?? 0;
  return env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'gpushare') : join(tmpRoot, `gpushare-${uid}`);
}

/** This user's runtime directory, created 0700 when missing and refused when someone else could reach into it. */
export function privateRuntimeDir(env: NodeJS.ProcessEnv = process.env, tmpRoot = '/tmp'): string {
  return ensurePrivateDir(runtimeDir(env, tmpRoot));
}

/**
 * Creates dir (mode 0700) when missing, then refuses it unless it is a real directory of this user
 * that nobody else can open: /tmp/gpushare-UID made first by another user would hand them the socket,
 * the launch gate and every secret kept there. Returns dir.
 */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const problem = privateDirProblem(dir);
  if (problem) throw new Error(problem);
  return dir;
}

/** Why dir may not hold this user's private files (owner, mode, not a directory), or null when it may; a missing dir is no problem. */
export function privateDirProblem(dir: string): string | null {
  let info;
  try {
    info = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const me = process.getuid?.() ?? 0;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
  const kind = info.isSymbolicLink() ? 'a symbolic link' : info.isDirectory() ? 'a directory' : 'not a directory';
  if (info.isDirectory() && info.uid === me && (info.mode & 0o077) === 0) return null;
  return (
    `${dir} must be a directory of yours that no one else can open (mode 0700), but it is ${kind} owned by ${lookupAccount(info.uid).name} (uid ${info.uid}) with mode ${mode}. ` +
    `Someone else may have made it to catch your engine's socket and secrets: remove it (or have its owner or an administrator remove it) and start again, or set XDG_RUNTIME_DIR to a directory of yours.`
  );
}
