// bench/cli: how long the `gpushare` command takes as a whole process, beside `node -e 0` in the
// same run: `--version`, `--help`, and `ps --json` against a running engine (a `gpushare serve
// --simulate` this bench starts in a private runtime dir). Each run is timed by bash's `time`
// (wall, and the command's user + system CPU, its children included); the commands take turns
// (node, version, help, ps, node, …) and each is compared with its own round's `node -e 0`, so a
// drift of the machine's speed reaches each alike.
// Figures are medians of BENCH_RUNS runs (default 7, at least 5). Prints figures; never fails on time.
// Goals (issue 25): --version and --help within 1.3× of `node -e 0`; ps --json within 2×.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ENV, CLI_PATH } from '../electron/cli/testing/compiled-cli.js';

const RUNS = Math.max(5, Number(process.env.BENCH_RUNS ?? 7));
const GOALS: Record<string, number> = { 'gpushare --version': 1.3, 'gpushare --help': 1.3, 'gpushare ps --json': 2 };

interface Timing {
  wall: number;
  cpu: number;
}

const home = mkdtempSync(join(tmpdir(), 'gpushare-bench-cli-'));
const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config') };
delete env.GPUSHARE_FAKEGPU_STATE; // the engine's own box, not one this shell points at

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** One run of argv, timed by bash's `time` keyword: the command alone, not bash's own start. */
function timeOnce(argv: string[]): Timing {
  const script = `TIMEFORMAT='%3R %3U %3S'; time ${argv.map(quote).join(' ')} >/dev/null 2>&1`;
  const run = spawnSync('bash', ['-c', script], { env, encoding: 'utf8' });
  const [wall, user, system] = run.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  if (run.status !== 0 || !Number.isFinite(wall)) throw new Error(`${argv.join(' ')}: ${run.stderr.trim()}`);
  return { wall, cpu: user + system };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function serve(): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI_PATH, 'serve', '--simulate', 'a100-40gb', '--db', join(home, 'usage.db')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()).includes('engine socket:') && resolve());
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const commands: Array<[string, string[]]> = [
  ['node -e 0', [process.execPath, '-e', '0']],
  ['gpushare --version', [process.execPath, CLI_PATH, '--version']],
  ['gpushare --help', [process.execPath, CLI_PATH, '--help']],
  ['gpushare ps --json', [process.execPath, CLI_PATH, 'ps', '--json']],
];

const engine = await serve();
try {
  for (const [, argv] of commands) timeOnce(argv); // warm the file cache; not counted
  const timings = new Map<string, Timing[]>(commands.map(([name]) => [name, []]));
  for (let run = 0; run < RUNS; run++) for (const [name, argv] of commands) timings.get(name)!.push(timeOnce(argv));
  const base = timings.get('node -e 0')!;
  const baseWall = median(base.map((t) => t.wall));
  const baseCpu = median(base.map((t) => t.cpu));
  console.log(`bench/cli: whole processes timed by bash's time, median of ${RUNS} runs taking turns, ps against \`gpushare serve --simulate a100-40gb\`, Node ${process.version}`);
  console.log(`${'command'.padEnd(22)}${'wall s'.padStart(9)}${'cpu s'.padStart(9)}${'wall ×'.padStart(9)}${'cpu ×'.padStart(9)}   goal (wall)`);
  for (const [name] of commands) {
    const list = timings.get(name)!;
    const wall = median(list.map((t) => t.wall));
    const cpu = median(list.map((t) => t.cpu));
    // each round's ratio to that round's node -e 0, then the median: a drift of the machine's speed cancels out
    const wallRatio = median(list.map((t, i) => t.wall / base[i].wall));
    const cpuRatio = median(list.map((t, i) => t.cpu / base[i].cpu));
    const goal = GOALS[name] ? `≤ ${GOALS[name]}× ${wallRatio <= GOALS[name] ? 'met' : 'not met'}` : '';
    console.log(`${name.padEnd(22)}${wall.toFixed(3).padStart(9)}${cpu.toFixed(3).padStart(9)}${wallRatio.toFixed(2).padStart(9)}${cpuRatio.toFixed(2).padStart(9)}   ${goal}`);
  }
  console.log(`(× is the median of each round's ratio to that round's node -e 0; node -e 0 itself: median ${baseWall.toFixed(3)} s wall, ${baseCpu.toFixed(3)} s CPU)`);
} finally {
  await engine.stop();
  rmSync(home, { recursive: true, force: true });
}
