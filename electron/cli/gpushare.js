#!/usr/bin/env node
// Entry point of the `gpushare` command: runs the compiled CLI from dist/.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// GPUSHARE_DIST: another compiled tree (a test runs the CLI of the tree it was compiled into)
const compiled = join(resolve(root, process.env.GPUSHARE_DIST || 'dist'), 'electron', 'cli', 'main.js');
if (!existsSync(compiled)) {
  process.stderr.write(`gpushare is not built yet: run \`npm install\` (or \`npm run build\`) in ${root}.\n`);
  process.exit(1);
}
const { main } = await import(pathToFileURL(compiled).href);
process.exitCode = await main(process.argv.slice(2));
