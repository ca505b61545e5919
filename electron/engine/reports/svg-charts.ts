// Charts as inline SVG strings: no script, no external resources, so they print and mail as they are.

export const PALETTE = ['#2f6fde', '#e8793a', '#2da44e', '#bf3989', '#8250df', '#d4a72c', '#1b998b', '#6e7781'];

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}


/** Ticks from 0 a round step apart (1, 2 or 5 × 10^n), at most 5 intervals, the last at or above max. */
export function axisTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const power = 10 ** Math.floor(Math.log10(max / 5));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => Math.ceil(max / s - 1e-9) <= 5)!;
  const intervals = Math.ceil(max / step - 1e-9);
  // toPrecision: 3 × 0.005 is 0.015000000000000001 in binary
  return Array.from({ length: intervals + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

export interface Bar {
  label: string;
  value: number;
}

/** Lines of at most `max` characters, broken at spaces, slashes or dashes where it can: a label is never cut short. */
export function wrapLabel(text: string, max: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const at = Math.max(window.lastIndexOf(' '), window.lastIndexOf('/'), window.lastIndexOf('-'));
    const cut = at > max / 2 ? at + 1 : max;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut);
  }
  lines.push(rest);
  return lines;
}

/** Characters of an 11 px label across the chart's width. */
const LABEL_CHARS = 104;

/** Horizontal bars, largest first as given; each label whole on the line(s) above its bar. */
export function barChart(title: string, bars: Bar[], format: (v: number) => string, width = 680): string {
  const lineH = 13;
  const barH = 14;
  const right = 90;
  const top = 28;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const scale = (v: number): number => (max > 0 ? ((width - right) * v) / max : 0);
  let y = top;
  const rows = bars.map((b) => {
    const label = wrapLabel(b.label, LABEL_CHARS);
    const text = `<text x="0" y="${y + 10}" class="label">${label.map((line, i) => `<tspan x="0" dy="${i === 0 ? 0 : lineH}">${escapeXml(line)}</tspan>`).join('')}</text>`;
    const barY = y + label.length * lineH + 1;
    y = barY + barH + 7;
    return text + `<rect x="0" y="${barY}" width="${scale(b.value).toFixed(1)}" height="${barH}" fill="${PALETTE[0]}"/>` +
      `<text x="${scale(b.value) + 6}" y="${barY + 11}" class="value">${escapeXml(format(b.value))}</text>`;
  });
  const empty = bars.length === 0 ? `<text x="0" y="${top + 15}" class="label">No usage in this range.</text>` : '';
  const height = Math.max(y, top + 22) + 4;
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
  // four legend entries a row, or one a row when a name would not fit a quarter of the width
  const perRow = lines.some((l) => l.name.length > 22) ? 1 : 4;
  const bottom = 46 + 16 * Math.ceil(lines.length / perRow);
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const yTicks = axisTicks(Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p[1]))));
  const yMax = yTicks[yTicks.length - 1];
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const px = (x: number): number => left + (x1 > x0 ? ((x - x0) / (x1 - x0)) * plotW : plotW / 2);
  const py = (y: number): number => top + plotH - (y / yMax) * plotH;
  const parts: string[] = [`<text x="0" y="16" class="title">${escapeXml(title)}</text>`];
  for (const v of yTicks) {
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${left - 6}" y="${(py(v) + 4).toFixed(1)}" text-anchor="end" class="axis tick-y">${escapeXml(String(v))}</text>`);
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
    const lx = left + (i % perRow) * (plotW / perRow);
    const ly = top + plotH + 34 + 16 * Math.floor(i / perRow);
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${colour}"/><text x="${lx + 14}" y="${ly}" class="label">${escapeXml(line.name)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}">${parts.join('')}</svg>`;
}
