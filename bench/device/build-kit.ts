// `npm run device-kit [-- --dry-run] [--out DIR]`: the device kit, a folder that runs every native check
// on a bare Linux x86-64 machine with an NVIDIA driver and no network (bench/device/README.md).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeFiles } from '../../electron/main/packaged-files.js';
import { copyApp } from '../../electron/cli/app-copy.js';

/** The kit's size limit: 64 MiB travel to a lent GPU, and the working tree's own files need some of it. */
export const KIT_LIMIT_BYTES = 60 * 1024 * 1024;

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const MiB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The native parts: every one the installed app runs (one list: packaged-files.ts), and the kit's own. */
const NATIVE_FILES = [
  ...runtimeFiles().filter((f) => f.path.startsWith('native/')).map((f) => f.path),
  'native/preload/build/launch_bench',
  'native/preload/build/preload_probe',
  'native/fakegpu/scenarios',
];

/** The kit's own compiled checks, beside the engine and CLI. */
const KIT_DIST = 'dist/bench/device';

export interface KitSummary {
  dir: string;
  bytes: number;
  nodeVersion: string;
  files: number;
}

/** node, xz-compressed, made once per Node binary (compressing takes a minute on two cores). */
function compressedNode(cacheDir: string): { path: string; version: string } {
  const version = process.version;
  const stats = statSync(process.execPath);
  const cached = join(cacheDir, `node-${version}-${stats.size}.xz`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.partial`;
    const xz = spawnSync('sh', ['-c', 'xz -6 -T0 -c -- "$1" > "$2"', 'xz', process.execPath, partial], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (xz.error || xz.status !== 0) throw new Error(`could not compress ${process.execPath} with xz (install xz-utils): ${xz.error?.message ?? xz.stderr.toString().trim()}`);
    copyFileSync(partial, cached);
    rmSync(partial);
  }
  return { path: cached, version };
}

function treeBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
    files++;
  }
  return { bytes, files };
}

/** Builds the kit into `outDir` (replacing what was there) from this checkout's build; throws past the size limit. */
export function buildKit(outDir: string, options: { nodeCache?: string } = {}): KitSummary {
  for (const needed of [...NATIVE_FILES, KIT_DIST]) {
    if (!existsSync(join(repoRoot, needed))) throw new Error(`${needed} is missing: run \`npm run build\` before building the device kit.`);
  }
  rmSync(outDir, { recursive: true, force: true });
  const device = join(outDir, 'device');
  const app = join(device, 'app');
  mkdirSync(app, { recursive: true });

  copyApp(app, { extraTrees: [KIT_DIST] });
  for (const file of NATIVE_FILES) cpSync(join(repoRoot, file), join(app, file), { recursive: true });

  const source = join(repoRoot, 'bench', 'device');
  cpSync(join(source, 'checks'), join(device, 'checks'), { recursive: true });
  copyFileSync(join(source, 'check.sh'), join(device, 'check'));
  chmodSync(join(device, 'check'), 0o755);
  const node = compressedNode(options.nodeCache ?? join(repoRoot, 'build', 'node-cache'));
  copyFileSync(node.path, join(device, 'node.xz'));
  writeFileSync(join(device, 'kit.json'), JSON.stringify({ nodeVersion: node.version, builtAt: new Date().toISOString(), commit: gitHead() }, null, 2) + '\n');

  const { bytes, files } = treeBytes(outDir);
  if (bytes > KIT_LIMIT_BYTES) throw new Error(`the device kit is ${MiB(bytes)}, over its limit of ${MiB(KIT_LIMIT_BYTES)}: ${relative(repoRoot, outDir)} holds too much.`);
  return { dir: outDir, bytes, nodeVersion: node.version, files };
}

function gitHead(): string | null {
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  return git.status === 0 ? git.stdout.trim() : null;
}

async function main(argv: string[]): Promise<number> {
  const dryRun = argv.includes('--dry-run');
  const outAt = argv.indexOf('--out');
  const outDir = outAt >= 0 && argv[outAt + 1] ? argv[outAt + 1] : join(repoRoot, 'build', 'device-kit');
  const unknown = argv.filter((a, i) => a !== '--dry-run' && a !== '--out' && i !== outAt + 1);
  if (unknown.length > 0 || (outAt >= 0 && !argv[outAt + 1])) {
    process.stderr.write(`device-kit: unknown argument ${unknown[0] ?? '--out needs a folder'}\nUsage: npm run device-kit [-- --dry-run] [--out DIR]\n`);
    return 2;
  }
  const kit = buildKit(outDir);
  process.stdout.write(`device kit: ${relative(process.cwd(), kit.dir) || kit.dir}, ${MiB(kit.bytes)} in ${kit.files} files (limit ${MiB(KIT_LIMIT_BYTES)}), node ${kit.nodeVersion}\n`);
  if (!dryRun) return 0;
  const results = join(outDir, 'dry-run-results');
  const check = spawnSync(join(outDir, 'device', 'check'), [results, '--simulate'], { stdio: 'inherit' });
  return check.status ?? 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = await main(process.argv.slice(2));
