// device/check OUTDIR [--simulate] [--only a,b]: every native check of the device kit, each in its own
// process group with its own time bound, so one that fails or hangs never stops the rest. Writes
// OUTDIR/results.json (one object) and OUTDIR/summary.txt. Never changes the card's settings.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKS } from './kit-checks.js';
import { describeMachine, killMarked, type CheckOutcome, type KitContext } from './kit-rig.js';

const TOTAL_BOUND_S = 8 * 60;

interface Args {
  out: string;
  simulate: boolean;
  only: string[] | null;
  one: string | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { out: '', simulate: false, only: null, one: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--simulate') args.simulate = true;
    else if (a === '--only') args.only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--one') args.one = argv[++i] ?? null;
    else if (!a.startsWith('--') && !args.out) args.out = resolve(a);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.out) throw new Error('usage: device/check OUTDIR [--simulate] [--only seeing,quota,gate,capture,park,launch-cost]');
  const unknown = (args.only ?? []).filter((name) => !CHECKS.some((c) => c.name === name));
  if (unknown.length) throw new Error(`no check named ${unknown.join(', ')}; the checks: ${CHECKS.map((c) => c.name).join(', ')}`);
  return args;
}

/** One check, in this process (the orchestrator started it in its own process group). */
async function runOne(args: Args, name: string): Promise<void> {
  const check = CHECKS.find((c) => c.name === name)!;
  const context: KitContext = { out: args.out, simulate: args.simulate, mark: process.env.GPUSHARE_KIT_MARK ?? '', machine: JSON.parse(process.env.GPUSHARE_KIT_MACHINE ?? '{}') };
  let outcome: CheckOutcome;
  try {
    outcome = await check.run(context);
  } catch (error) {
    outcome = { status: 'failed', reason: error instanceof Error ? (error.stack ?? error.message) : String(error), figures: {} };
  }
  writeFileSync(join(args.out, `${name}.json`), JSON.stringify(outcome, null, 2) + '\n');
}

interface Recorded extends CheckOutcome {
  name: string;
  title: string;
  seconds: number;
  boundSeconds: number;
}

/** Runs a check as `node check.js --one NAME` in a new process group; past its bound the group and everything marked as its own is killed. */
function runBounded(args: Args, name: string, boundS: number, machine: object): Promise<'ended' | 'timed out'> {
  const mark = `${name}-${process.pid}-${Date.now()}`;
  const argv = [fileURLToPath(import.meta.url), args.out, '--one', name, ...(args.simulate ? ['--simulate'] : [])];
  const child = spawn(process.execPath, argv, {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GPUSHARE_KIT_MARK: mark, GPUSHARE_KIT_MACHINE: JSON.stringify(machine) },
  });
  return new Promise((resolveRun) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, boundS * 1000);
    child.on('exit', () => {
      clearTimeout(timer);
      const leftovers = killMarked(mark); // jobs run in sessions of their own, outside the group
      if (leftovers.length) process.stdout.write(`  ${name}: ended ${leftovers.length} process(es) it left: ${leftovers.join(', ')}\n`);
      resolveRun(timedOut ? 'timed out' : 'ended');
    });
  });
}

async function orchestrate(args: Args): Promise<number> {
  mkdirSync(args.out, { recursive: true });
  const started = Date.now();
  const machine = await describeMachine(args.simulate);
  process.stdout.write(`device kit on ${machine.host}: ${machine.gpus.join('; ') || 'no GPU listed'}${args.simulate ? ' (SIMULATED driver: dry run)' : ''}\n`);
  const recorded: Recorded[] = [];
  for (const check of CHECKS.filter((c) => !args.only || args.only.includes(c.name))) {
    const left = TOTAL_BOUND_S - (Date.now() - started) / 1000;
    const bound = Math.max(5, Math.min(check.boundSeconds, left));
    const t0 = Date.now();
    process.stdout.write(`- ${check.name} (bound ${bound.toFixed(0)} s) …\n`);
    const ended = await runBounded(args, check.name, bound, machine);
    let outcome: CheckOutcome;
    try {
      const part = join(args.out, `${check.name}.json`);
      outcome = JSON.parse(readFileSync(part, 'utf8')) as CheckOutcome;
      rmSync(part); // results.json holds it
    } catch {
      outcome = { status: 'failed', reason: ended === 'timed out' ? `timed out after ${bound.toFixed(0)} s` : 'the check ended without a result', figures: {} };
    }
    const record = { name: check.name, title: check.title, seconds: Number(((Date.now() - t0) / 1000).toFixed(1)), boundSeconds: bound, ...outcome };
    recorded.push(record);
    process.stdout.write(`  ${record.status}${record.reason ? `: ${firstLine(record.reason)}` : ''} (${record.seconds} s)\n`);
  }
  const results = { kit: kitInfo(), machine, simulated: args.simulate, startedAt: new Date(started).toISOString(), seconds: Number(((Date.now() - started) / 1000).toFixed(1)), checks: recorded };
  writeFileSync(join(args.out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  const summary = summarize(results.checks, results.seconds, machine.host, args.simulate);
  writeFileSync(join(args.out, 'summary.txt'), summary);
  process.stdout.write(summary);
  return recorded.some((r) => r.status === 'failed') ? 1 : 0;
}

const firstLine = (text: string): string => text.split('\n')[0];

function kitInfo(): unknown {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL('../../../../kit.json', import.meta.url)), 'utf8'));
  } catch {
    return null; // run from a checkout, not a kit
  }
}

function summarize(checks: Recorded[], seconds: number, host: string, simulated: boolean): string {
  const lines = [`device kit summary: ${host}${simulated ? ' (simulated driver, dry run)' : ''}, ${seconds} s`];
  for (const c of checks) {
    lines.push(`${c.status.padEnd(7)} ${c.name.padEnd(12)} ${c.reason ? firstLine(c.reason) : ''}`.trimEnd());
    for (const line of c.lines ?? []) lines.push(`        ${line}`);
  }
  return lines.join('\n') + '\n';
}

async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`device/check: ${(error as Error).message}\n`);
    return 2;
  }
  if (args.one) {
    await runOne(args, args.one);
    return 0;
  }
  return orchestrate(args);
}

process.exitCode = await main(process.argv.slice(2));
