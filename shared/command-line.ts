// How a process's command line that the engine shows only the start of is marked, in `gpushare ps` and the console
// alike, and how the processes a snapshot leaves out are told.
import { formatByteSize } from './byte-size.js';
import type { GpuProcessView, GpuView } from './snapshot.js';

/** "[cut: 5.6M] " before a command line longer than shown (5.6M: the whole one); '' before a whole one. */
export const cutMark = (cut: GpuProcessView['argvCut']): string => (cut ? `[cut: ${formatByteSize(cut.bytes)}] ` : '');

/** The mark explained, for a tooltip. */
export const cutSentence = (cut: NonNullable<GpuProcessView['argvCut']>): string =>
  `Its command line is ${formatByteSize(cut.bytes)} in ${cut.args} argument${cut.args === 1 ? '' : 's'}; only its start is shown.`;

/** "GPU 0: 1200 more processes (1.2G) are not listed" for a GPU whose snapshot left some out; null where none. */
export function unlistedSentence(gpu: Pick<GpuView, 'index' | 'unlisted'>): string | null {
  const { unlisted } = gpu;
  if (!unlisted || unlisted.processes === 0) return null;
  const plural = unlisted.processes === 1 ? 'process is' : 'processes are';
  return `GPU ${gpu.index}: ${unlisted.processes} more ${plural} not listed (${formatByteSize(unlisted.usedMemory)} of GPU memory): a snapshot lists processes up to its size bound, each user's largest first, in turns.`;
}
