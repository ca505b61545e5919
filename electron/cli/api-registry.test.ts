// The CLI against the API registry (shared/api.ts): every method the CLI's code calls declares the
// commands that reach it, each of those is a real command, subcommand and option that the completion
// offers, and no method claims a command whose code never calls it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { API_METHODS, type ApiMethod } from '../../shared/api.js';
import { packageRoot } from '../engine/paths.js';
import { COMMANDS, findCommand, usageOf } from './command-table.js';
import { bashCompletion, optionsIn } from './commands/completion.js';

const METHODS = Object.keys(API_METHODS) as ApiMethod[];

/** The CLI's own code (not its tests or test helpers), as source text. */
function cliSources(): Map<string, string> {
  const root = join(packageRoot(), 'electron', 'cli');
  const files = new Map<string, string>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts') || path.includes('/testing/')) continue;
    files.set(path.slice(root.length + 1), readFileSync(path, 'utf8'));
  }
  return files;
}

test('every API method the CLI calls declares the commands that reach it, and every declared one is called', () => {
  const sources = [...cliSources().values()].join('\n');
  const called = METHODS.filter((method) => sources.includes(`'${method}'`));
  const declared = METHODS.filter((method) => API_METHODS[method].cli !== undefined);
  assert.ok(called.includes('jobs.move') && called.includes('session.whoami'), `found in the CLI: ${called.join(', ')}`);
  assert.deepEqual(called, declared);
});

test('each command the registry names is a command, subcommand and option of the table, offered by the completion', () => {
  const script = bashCompletion(COMMANDS);
  for (const method of METHODS) {
    for (const reach of API_METHODS[method].cli ?? []) {
      const [name, ...rest] = reach.split(' ');
      const command = findCommand(name);
      assert.ok(command, `${method}: no command "${name}"`);
      const sub = rest.find((word) => !word.startsWith('-'));
      if (sub !== undefined) assert.ok(command.subcommands?.[sub], `${method}: "${name}" has no subcommand "${sub}"`);
      for (const option of rest.filter((word) => word.startsWith('-'))) {
        assert.ok(optionsIn(usageOf(command, sub)).includes(option), `${method}: "${reach}": ${option} is not in its usage`);
        const offered = new RegExp(`\\n\\s+'?${sub === undefined ? name : `${name} ${sub}`}'?\\) offer='[^']*${option}[ ']`);
        assert.match(script, offered, `${method}: the completion does not offer ${option} after ${name}${sub ? ` ${sub}` : ''}`);
      }
    }
  }
});
