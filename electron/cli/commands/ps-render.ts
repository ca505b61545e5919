// `gpushare ps` as text: the GPUs, then every GPU process.
import { cutMark, unlistedSentence } from '../../../shared/command-line.js';
import { describeContext } from '../../../shared/process-context.js';
import type { GpuProcessView, GpuView, Snapshot } from '../../../shared/snapshot.js';
import { clip, formatBytes, formatPercent, table } from '../format.js';

export function renderSnapshot(snapshot: Snapshot, width = 120): string {
  const { driver } = snapshot;
  const cuda = driver.cudaDriverVersion ? `, CUDA ${Math.floor(driver.cudaDriverVersion / 1000)}.${(driver.cudaDriverVersion % 1000) / 10}` : '';
  const banner = driver.simulated
    ? `SIMULATED GPUs (scenario ${driver.scenario ?? 'custom'}): not real hardware.\n`
    : '';
  const head = `${banner}Driver ${driver.driverVersion}, NVML ${driver.nvmlVersion}${cuda} — ${new Date(snapshot.takenAt).toLocaleString()}`;
  return [head, '', renderGpus(snapshot.gpus), '', renderProcesses(snapshot, width)].join('\n');
}

function renderGpus(gpus: GpuView[]): string {
  const rows: string[][] = [];
  for (const gpu of gpus) {
    if (gpu.lost) {
      rows.push([String(gpu.index), gpu.name, 'LOST', '', '', '', '', gpu.errors[0] ?? 'the GPU stopped answering']);
      continue;
    }
    const power = gpu.powerWatts === null ? '-' : `${Math.round(gpu.powerWatts)}/${gpu.powerLimitWatts === null ? '-' : Math.round(gpu.powerLimitWatts)}W`;
    const mig = gpu.migEnabled === null ? '-' : gpu.migEnabled ? 'on' : 'off';
    const pending = gpu.migPending !== null && gpu.migPending !== gpu.migEnabled ? ` (→${gpu.migPending ? 'on' : 'off'})` : '';
    rows.push([
      String(gpu.index),
      gpu.name,
      `${formatBytes(gpu.memoryUsed)}/${formatBytes(gpu.memoryTotal)}`,
      formatPercent(gpu.utilizationGpu),
      gpu.temperatureC === null ? '-' : `${gpu.temperatureC}C`,
      power,
      mig + pending,
      gpu.computeMode ?? '-',
    ]);
    for (const slice of gpu.migSlices) {
      rows.push([
        '',
        `└ MIG ${slice.profileName ?? '?'} (GI ${slice.gpuInstanceId} CI ${slice.computeInstanceId})`,
        `${formatBytes(slice.memoryUsed)}/${formatBytes(slice.memoryTotal)}`,
        '',
        '',
        '',
        '',
        slice.smCount === null ? '' : `${slice.smCount} SMs`,
      ]);
    }
    for (const error of gpu.errors) rows.push(['', `! ${error}`, '', '', '', '', '', '']);
  }
  return table(['GPU', 'NAME', 'MEMORY', 'UTIL', 'TEMP', 'POWER', 'MIG', 'MODE'], rows, new Set([2, 3, 4, 5]));
}

function renderProcesses(snapshot: Snapshot, width: number): string {
  const unlisted = snapshot.gpus.map(unlistedSentence).filter((line) => line !== null);
  if (snapshot.processes.length === 0) return unlisted.length === 0 ? 'No GPU processes.' : ['No GPU processes listed.', ...unlisted].join('\n');
  const sorted = [...snapshot.processes].sort((a, b) => a.gpuIndex - b.gpuIndex || (b.usedMemory ?? 0) - (a.usedMemory ?? 0));
  // WHERE (container, Slurm job, kernel, unit, ssh) only when some process has one: most boxes run none of it
  const where = sorted.map((p) => describeContext(p.context));
  const showWhere = where.some((w) => w !== '');
  const rows = sorted.map((p, i) => [
    String(p.pid),
    p.user ?? '?',
    String(p.gpuIndex) + slice(p),
    p.kind === 'compute' ? 'C' : p.kind === 'graphics' ? 'G' : 'M',
    formatPercent(p.smPercent),
    formatBytes(p.usedMemory),
    ...(showWhere ? [where[i] || '-'] : []),
    command(p),
  ]);
  const header = ['PID', 'USER', 'GPU', 'TYPE', 'SM', 'MEMORY', ...(showWhere ? ['WHERE'] : []), 'COMMAND'];
  const text = table(header, rows, new Set([0, 4, 5]));
  const notes = sorted.some((p) => p.argvCut) ? ['[cut: SIZE]: a command line longer than shown; SIZE is the whole one.'] : [];
  return [
    ...text.split('\n').map((l) => clip(l, width)),
    ...notes,
    ...unlisted,
  ].join('\n');
}

const slice = (p: GpuProcessView): string => (p.gpuInstanceId === null ? '' : `/${p.gpuInstanceId}.${p.computeInstanceId ?? '-'}`);

function command(p: GpuProcessView): string {
  if (p.argv.length > 0) return cutMark(p.argvCut) + p.argv.join(' ');
  return p.command ?? '(not visible from here: exited or in another pid namespace)';
}
