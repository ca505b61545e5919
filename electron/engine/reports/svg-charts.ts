// Charts as inline SVG strings: no script, no external resources, so they print and mail as they are.

export const PALETTE = ['#2f6fde', '#e8793a', '#2da44e', '#bf3989', '#8250df', '#d4a72c', '#1b998b', '#6e7781'];

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const clip = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max - 1) + '…');

/** A nice upper bound for an axis: 1, 2, 2.5 or 5 × 10^n at or above max. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 2.5, 5, 10].find((m) => m * power >= max) ?? 10) * power;
}

export interface Bar {
  label: string;
  value: number;
}

/** Horizontal bars, largest first as given. */
export function barChart(title: string, bars: Bar[], format: (v: number) => string, width = 680): string {
  const rowH = 22;
  const left = 200;
  const right = 90;
  const top = 28;
  const height = top + Math.max(1, bars.length) * rowH + 8;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const scale = (v: number): number => (max > 0 ? ((width - left - right) * v) / max : 0);
  const rows = bars.map((b, i) => {
    const y = top + i * rowH;
    return `<text x="${left - 8}" y="${y + 15}" text-anchor="end" class="label">${escapeXml(clip(b.label, 30))}</text>` +
      `<rect x="${left}" y="${y + 3}" width="${scale(b.value).toFixed(1)}" height="${rowH - 6}" fill="${PALETTE[0]}"/>` +
      `<text x="${left + scale(b.value) + 6}" y="${y + 15}" class="value">${escapeXml(format(b.value))}</text>`;
  });
  const empty = bars.length === 0 ? `<text x="${left}" y="${top + 15}" class="label">No usage in this range.</text>` : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}">` +
    `<text x="0" y="16" class="title">${escapeXml(title)}</text>${rows.join('')}${empty}</svg>`;
}

export interface Line {
  name: string;
  /** [x, y] with x in ms since the epoch. */
  points: Array<[number, number]>;
}

/** Lines over time with a y axis from 0, a legend and a few time ticks. */
export function lineChart(title: string, lines: Line[], yLabel: string, timeLabel: (t: number) => string, width = 680, height = 300): string {
  const left = 56;
  const right = 28;
  const top = 28;
  const bottom = 46 + 16 * Math.ceil(lines.length / 4);
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const yMax = niceMax(Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p[1]))));
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const px = (x: number): number => left + (x1 > x0 ? ((x - x0) / (x1 - x0)) * plotW : plotW / 2);
  const py = (y: number): number => top + plotH - (y / yMax) * plotH;
  const parts: string[] = [`<text x="0" y="16" class="title">${escapeXml(title)}</text>`];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${left - 6}" y="${(py(v) + 4).toFixed(1)}" text-anchor="end" class="axis">${escapeXml(formatTick(v))}</text>`);
  }
  parts.push(`<text x="12" y="${top + plotH / 2}" transform="rotate(-90 12 ${top + plotH / 2})" text-anchor="middle" class="axis">${escapeXml(yLabel)}</text>`);
  if (xs.length > 0) {
    for (let i = 0; i <= 4; i++) {
      const t = x0 + ((x1 - x0) * i) / 4;
      parts.push(`<text x="${px(t).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle" class="axis">${escapeXml(timeLabel(t))}</text>`);
    }
  } else {
    parts.push(`<text x="${left + 8}" y="${top + plotH / 2}" class="label">No usage in this range.</text>`);
  }
  lines.forEach((line, i) => {
    const colour = PALETTE[i % PALETTE.length];
    const d = line.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join('');
    if (d) parts.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.6"/>`);
    const lx = left + (i % 4) * (plotW / 4);
    const ly = top + plotH + 34 + 16 * Math.floor(i / 4);
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${colour}"/><text x="${lx + 14}" y="${ly}" class="label">${escapeXml(clip(line.name, 22))}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}">${parts.join('')}</svg>`;
}

function formatTick(v: number): string {
  if (v === 0) return '0';
  if (v >= 100) return v.toFixed(0);
  if (v >= 1) return String(Number(v.toFixed(1)));
  return String(Number(v.toPrecision(2)));
}
