// A GPU tile's figures that change from one update to the next (utilization, memory, the users named):
// drawn on the tile's canvas, and written as words under it (the canvas's fallback content, which is what
// assistive technology and the tests read; it is not rendered, so writing it costs no layout or paint).
// React draws a tile only when its shape changes (its flags, how many lines it names). As elements, a tile's
// figures were a dozen text nodes laid out and painted on every update; drawn on the page's thread, they
// cost about as much: so the canvases are drawn in a worker (figures-worker.ts) where the page allows one.
import { useCallback, useRef } from 'react';
import type { LabConsoleGpu } from '../../../../shared/lab-console.js';
import { paintFigures, type CanvasSize, type FiguresTheme } from './figures-paint.js';
import type { FiguresMessage, FiguresReply } from './figures-worker.js';
import { rowAt, sameFigures, tileFigures, type TileFigures } from './tile-figures.js';

/**
 * The node's words, written only when they differ (the DOM is what was last shown, whoever drew it),
 * into its one text node where it has one.
 */
function setText(node: Element, text: string): void {
  const words = node.firstChild;
  if (words instanceof Text && words === node.lastChild) {
    if (words.data !== text) words.data = text;
  } else node.textContent = text;
}

/** A tile's canvas as this page knows it: handed to the worker, or drawn here. */
interface Tile {
  id: number;
  size: CanvasSize | null;
  figures: TileFigures | null;
  /** Handed to the worker: from then on, only the worker draws on it. */
  handedOver: boolean;
}

const tiles = new WeakMap<HTMLCanvasElement, Tile>();
let nextId = 1;

/** Who draws: no one yet (no tile so far), undecided while the worker starts, the worker, or this page. */
let drawer: 'none' | 'starting' | 'worker' | 'page' = 'none';
let worker: Worker | null = null;
/** Canvases mounted while the worker starts: handed over when it says it runs, drawn here if it cannot. */
let waiting: HTMLCanvasElement[] = [];
/** Figures for the worker, sent as one message per update however many tiles it changed. */
let batch: Array<{ id: number; figures: TileFigures }> = [];

let theme: FiguresTheme | null = null;
function themeOf(canvas: HTMLCanvasElement): FiguresTheme {
  if (theme) return theme;
  const style = getComputedStyle(canvas);
  const value = (name: string): string => style.getPropertyValue(name).trim();
  theme = { text: value('--text'), muted: value('--muted'), util: value('--accent'), mem: value('--best'), track: value('--meter-track'), family: style.fontFamily };
  return theme;
}

function post(message: FiguresMessage, transfer: Transferable[] = []): void {
  worker?.postMessage(message, transfer);
}

function paintHere(canvas: HTMLCanvasElement, tile: Tile): void {
  const context = tile.size && tile.figures ? canvas.getContext('2d') : null;
  if (context) paintFigures(context, tile.size!, tile.figures!, themeOf(canvas));
}

function handOver(canvas: HTMLCanvasElement, tile: Tile): void {
  const offscreen = canvas.transferControlToOffscreen();
  tile.handedOver = true;
  post({ kind: 'add', id: tile.id, canvas: offscreen, size: tile.size, figures: tile.figures }, [offscreen]);
}

/** The worker could not start (no OffscreenCanvas, a policy refusing workers): this page draws every canvas. */
function drawHere(why: unknown): void {
  if (drawer === 'page') return;
  console.warn('gpushare: the Lab view draws its tiles on the page, not in a worker:', why);
  drawer = 'page';
  worker?.terminate();
  worker = null;
  for (const canvas of waiting) {
    const tile = tiles.get(canvas);
    if (tile && canvas.isConnected) {
      if (tile.size) Object.assign(canvas, { width: tile.size.width, height: tile.size.height });
      paintHere(canvas, tile);
    }
  }
  waiting = [];
}

function startWorker(canvas: HTMLCanvasElement): void {
  drawer = 'starting';
  if (typeof canvas.transferControlToOffscreen !== 'function' || typeof Worker === 'undefined') return drawHere('no OffscreenCanvas here');
  try {
    // a classic worker (Vite bundles it whole): module workers ask more of the app:// scheme
    worker = new Worker(new URL('./figures-worker.ts', import.meta.url), { name: 'gpushare lab tiles' });
  } catch (error) {
    return drawHere(error);
  }
  worker.onmessage = ({ data }: MessageEvent<FiguresReply>) => {
    if (data.kind !== 'ready' || drawer !== 'starting') return;
    drawer = 'worker';
    post({ kind: 'theme', theme: themeOf(canvas) });
    for (const held of waiting) {
      const tile = tiles.get(held);
      if (tile && held.isConnected) handOver(held, tile);
    }
    waiting = [];
  };
  worker.onerror = (event) => {
    if (drawer === 'starting') drawHere(event.message || 'the worker did not start');
    else console.error('gpushare: the Lab view\'s tile worker failed:', event.message);
  };
}

/** Every figures canvas on the page: a canvas takes its size in device pixels from its box. */
const resizes =
  typeof ResizeObserver === 'undefined'
    ? null
    : new ResizeObserver((entries) => {
        for (const entry of entries) {
          const canvas = entry.target as HTMLCanvasElement;
          const tile = tiles.get(canvas);
          const ratio = window.devicePixelRatio || 1;
          const device = entry.devicePixelContentBoxSize?.[0];
          const size = { width: device ? device.inlineSize : Math.round(entry.contentRect.width * ratio), height: device ? device.blockSize : Math.round(entry.contentRect.height * ratio), ratio };
          if (!tile || size.width === 0 || size.height === 0) continue;
          tile.size = size;
          if (tile.handedOver) post({ kind: 'size', id: tile.id, size });
          else if (drawer === 'page') {
            Object.assign(canvas, { width: size.width, height: size.height });
            paintHere(canvas, tile);
          }
        }
      });

function watch(canvas: HTMLCanvasElement): void {
  if (tiles.has(canvas)) return; // React mounting it again (a strict-mode rehearsal): it is watched already
  const tile: Tile = { id: nextId++, size: null, figures: null, handedOver: false };
  tiles.set(canvas, tile);
  resizes?.observe(canvas, { box: 'device-pixel-content-box' });
  if (drawer === 'none') startWorker(canvas);
  if (drawer === 'worker') handOver(canvas, tile);
  else if (drawer === 'starting') waiting.push(canvas);
}

/** A canvas React let go of: forgotten once it has left the page (a remount keeps it). */
function release(canvas: HTMLCanvasElement): void {
  setTimeout(() => {
    const tile = tiles.get(canvas);
    if (!tile || canvas.isConnected) return;
    resizes?.unobserve(canvas);
    tiles.delete(canvas);
    if (tile.handedOver) post({ kind: 'drop', id: tile.id });
    waiting = waiting.filter((held) => held !== canvas);
    if (hovered === canvas) hovered = null;
  }, 0);
}

/** The ref for a tile's figures canvas: watched from its mounting, forgotten when it leaves the page. */
export function useFiguresCanvas(): (canvas: HTMLCanvasElement | null) => void {
  const mounted = useRef<HTMLCanvasElement | null>(null);
  return useCallback((canvas: HTMLCanvasElement | null) => {
    if (mounted.current && mounted.current !== canvas) release(mounted.current);
    mounted.current = canvas;
    if (canvas) watch(canvas);
  }, []);
}

function flush(): void {
  if (batch.length > 0) post({ kind: 'draw', tiles: batch });
  batch = [];
}

/**
 * Writes `gpu`'s figures into its tile (GpuTile's markup: the head, then the canvas with the figures' words
 * under it: the utilization meter, the memory meter, the users) and has them drawn.
 */
export function writeGpuFigures(tileElement: Element, gpu: LabConsoleGpu): void {
  const canvas = tileElement.children[1] as HTMLCanvasElement;
  const figures = tileFigures(gpu);
  const [util, mem, users] = canvas.children;
  setText(util.lastElementChild!, figures.util.value);
  setText(mem.lastElementChild!, figures.mem.value);
  figures.lines.forEach((line, place) => {
    const item = users.children[place];
    if (line.name === null) setText(item, line.detail);
    else {
      setText(item.children[0], line.name);
      setText(item.children[1], line.detail);
    }
  });
  const tile = tiles.get(canvas);
  if (!tile || sameFigures(tile.figures, figures)) return; // drawn already, or to be drawn from tile.figures once it has a size
  tile.figures = figures;
  if (tile.handedOver) {
    if (batch.length === 0) queueMicrotask(flush); // the update's other tiles are written in the same task
    batch.push({ id: tile.id, figures });
  } else if (drawer === 'page') paintHere(canvas, tile);
  if (canvas === hovered) showFiguresTitle(canvas, hoveredAt);
}

/** The canvas under the pointer, and how far down it the pointer is: its title follows the updates. */
let hovered: HTMLCanvasElement | null = null;
let hoveredAt = 0;

/**
 * Titles the canvas with what the pointer is over: a meter in words, or a user's whole line (a long one is
 * cut on the canvas). Written while the pointer moves, not on every update: a tooltip shows only under it.
 */
function showFiguresTitle(canvas: HTMLCanvasElement, y: number): void {
  hovered = canvas;
  hoveredAt = y;
  const figures = tiles.get(canvas)?.figures;
  if (!figures) return;
  const row = rowAt(y, figures.lines.length);
  const line = typeof row === 'number' ? figures.lines[row] : null;
  const title = row === 'util' || row === 'mem' ? figures[row].title : line ? [line.name, line.detail].filter(Boolean).join(' ') : '';
  if ((canvas.getAttribute('title') ?? '') !== title) {
    if (title) canvas.setAttribute('title', title);
    else canvas.removeAttribute('title');
  }
}

/** The tiles' pointer handler: which figures canvas the pointer is on, and where. */
export function followPointer(event: { target: EventTarget | null; clientY: number }): void {
  const canvas = event.target instanceof HTMLCanvasElement && event.target.classList.contains('lab-figures') ? event.target : null;
  if (canvas === null) hovered = null;
  else showFiguresTitle(canvas, event.clientY - canvas.getBoundingClientRect().top);
}
