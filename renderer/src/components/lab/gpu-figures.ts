// A GPU tile's figures that change from one update to the next (utilization, memory, the users named),
// written into the tile's nodes directly: React draws a tile only when its shape changes (its flags,
// how many users it names), so an update that moves every figure of a box re-renders no tile.
import type { LabConsoleGpu } from '../../../../shared/lab-console.js';
import { formatBytes, formatPercent } from '../../format.js';

/**
 * The node's words, written only when they differ (the DOM is what was last shown, whoever drew it),
 * into its one text node where it has one: a new text node is a style and layout object more.
 */
function setText(node: Element, text: string): void {
  const words = node.firstChild;
  if (words instanceof Text && words === node.lastChild) {
    if (words.data !== text) words.data = text;
  } else node.textContent = text;
}

/** Each meter's hover title as of the last update: written into the page only while the pointer is on it (showMeterTitle). */
const titles = new WeakMap<Element, string>();
/** The meter under the pointer, if any: the one whose title follows the updates. */
let hovered: Element | null = null;

function setTitle(meter: Element, title: string): void {
  if (meter.getAttribute('title') !== title) meter.setAttribute('title', title);
}

/**
 * Gives the meter at `target` its title when the pointer comes onto it: a title written on every update
 * was a style invalidation per meter per update, for a tooltip that shows only under the pointer.
 */
export function showMeterTitle(target: EventTarget | null): void {
  const meter = target instanceof Element ? target.closest('.lab-meter') : null;
  hovered = meter;
  const title = meter && titles.get(meter);
  if (meter && title) setTitle(meter, title);
}

function setMeter(meter: Element, title: string, share: number, value: string): void {
  titles.set(meter, title);
  if (meter === hovered) setTitle(meter, title);
  const bar = meter.children[1] as HTMLElement;
  const size = `${share}% 100%`;
  if (bar.style.backgroundSize !== size) bar.style.backgroundSize = size;
  setText(meter.children[2], value);
}

/** Writes `gpu`'s figures into its tile (GpuTile's markup: head, utilization meter, memory meter, users). */
export function writeGpuFigures(tile: Element, gpu: LabConsoleGpu): void {
  const [, util, mem, users] = tile.children;
  setMeter(util, `utilization ${formatPercent(gpu.utilization)}`, gpu.utilization ?? 0, formatPercent(gpu.utilization));
  const memoryShare = gpu.memoryTotal > 0 && gpu.memoryUsed !== null ? Math.min(100, (gpu.memoryUsed / gpu.memoryTotal) * 100) : 0;
  setMeter(mem, `memory ${formatBytes(gpu.memoryUsed)} of ${formatBytes(gpu.memoryTotal)}`, memoryShare, `${formatBytes(gpu.memoryUsed)} / ${formatBytes(gpu.memoryTotal)}`);
  gpu.users.forEach((u, place) => {
    const line = users.children[place];
    setText(line.children[0], u.user);
    setText(line.children[1], `${formatBytes(u.memoryBytes)} · ${u.processes} proc`);
  });
  if (gpu.otherUsers > 0) setText(users.children[gpu.users.length], `+${gpu.otherUsers} more`);
}
