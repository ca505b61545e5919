// The figures' worker: every tile canvas the page hands over (transferControlToOffscreen) is drawn here,
// so an update's drawing and each canvas's new frame cost the page's thread nothing but one message.
import { paintFigures, type CanvasSize, type FiguresTheme } from './figures-paint.js';
import type { TileFigures } from './tile-figures.js';

/** From the page to the worker. */
export type FiguresMessage =
  | { kind: 'theme'; theme: FiguresTheme }
  | { kind: 'add'; id: number; canvas: OffscreenCanvas; size: CanvasSize | null; figures: TileFigures | null }
  | { kind: 'size'; id: number; size: CanvasSize }
  | { kind: 'draw'; tiles: Array<{ id: number; figures: TileFigures }> }
  | { kind: 'drop'; id: number };

/** From the worker to the page: it runs (a page whose policy refuses workers never hears this). */
export type FiguresReply = { kind: 'ready' };

interface Tile {
  canvas: OffscreenCanvas;
  context: OffscreenCanvasRenderingContext2D | null;
  size: CanvasSize | null;
  figures: TileFigures | null;
}

const tiles = new Map<number, Tile>();
let theme: FiguresTheme | null = null;

function draw(tile: Tile): void {
  if (tile.size && tile.figures && tile.context && theme) paintFigures(tile.context, tile.size, tile.figures, theme);
}

function resize(tile: Tile, size: CanvasSize): void {
  tile.size = size;
  tile.canvas.width = size.width;
  tile.canvas.height = size.height;
}

const scope = self as unknown as { onmessage: ((event: MessageEvent<FiguresMessage>) => void) | null; postMessage(message: FiguresReply): void };

scope.onmessage = ({ data: message }) => {
  switch (message.kind) {
    case 'theme':
      theme = message.theme;
      for (const tile of tiles.values()) draw(tile);
      break;
    case 'add': {
      const tile: Tile = { canvas: message.canvas, context: message.canvas.getContext('2d'), size: null, figures: message.figures };
      tiles.set(message.id, tile);
      if (message.size) resize(tile, message.size);
      draw(tile);
      break;
    }
    case 'size': {
      const tile = tiles.get(message.id);
      if (!tile) break;
      resize(tile, message.size);
      draw(tile);
      break;
    }
    case 'draw':
      for (const { id, figures } of message.tiles) {
        const tile = tiles.get(id);
        if (!tile) continue;
        tile.figures = figures;
        draw(tile);
      }
      break;
    case 'drop':
      tiles.delete(message.id);
      break;
  }
};
scope.postMessage({ kind: 'ready' });
