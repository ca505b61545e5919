// The CLI as the tests run it: the gpushare command on the compiled tree these tests were built into.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../engine/paths.js';

/** This file is <tree>/electron/cli/testing/compiled-cli.js: the tree is three levels up. */
export const COMPILED_TREE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CLI_PATH = join(packageRoot(), 'electron', 'cli', 'gpushare.js');
/** Environment for a spawned `gpushare`: run this tree, not whatever dist/ holds. */
export const CLI_ENV = { GPUSHARE_DIST: COMPILED_TREE };
