#!/usr/bin/env node
// Writes the tray and app icons (SVG, and PNG for the tray) for the three states:
// ok (all well), contention, alert. Run: node assets/generate-icons.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const STATES = { ok: '#3ecf8e', contention: '#f5b942', alert: '#ff6b6b' };
const CHIP = '#d7dde8';

const svg = (color) => `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
  <g stroke="${CHIP}" stroke-width="2" stroke-linecap="round">
    <path d="M10 3v4M16 3v4M22 3v4M10 25v4M16 25v4M22 25v4M3 10h4M3 16h4M3 22h4M25 10h4M25 16h4M25 22h4"/>
  </g>
  <rect x="7" y="7" width="18" height="18" rx="3" fill="#1c2230" stroke="${CHIP}" stroke-width="2"/>
  <circle cx="16" cy="16" r="5" fill="${color}"/>
</svg>
`;

// A tiny rasteriser for the same picture, at any size from 16 pixels up.
function raster(size, color) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
  const chip = [0xd7, 0xdd, 0xe8];
  const body = [0x1c, 0x22, 0x30];
  const px = new Uint8Array(size * size * 4);
  const s = size / 32;
  const put = (x, y, [cr, cg, cb], a = 255) => {
    const i = (y * size + x) * 4;
    px.set([cr, cg, cb, a], i);
  };
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const u = (x + 0.5) / s;
      const v = (y + 0.5) / s;
      const inChip = u >= 6 && u <= 26 && v >= 6 && v <= 26;
      const inBody = u >= 8 && u <= 24 && v >= 8 && v <= 24;
      const dot = (u - 16) ** 2 + (v - 16) ** 2 <= 25;
      const pin = [10, 16, 22].some((p) => Math.abs(u - p) <= 1) && (v < 7 || v > 25) && v > 2 && v < 30;
      const pinSide = [10, 16, 22].some((p) => Math.abs(v - p) <= 1) && (u < 7 || u > 25) && u > 2 && u < 30;
      if (dot) put(x, y, [r, g, b]);
      else if (inBody) put(x, y, body);
      else if (inChip || pin || pinSide) put(x, y, chip);
    }
  }
  return png(size, px);
}

function png(size, rgba) {
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    rows[y * (size * 4 + 1)] = 0;
    Buffer.from(rgba.buffer, y * size * 4, size * 4).copy(rows, y * (size * 4 + 1) + 1);
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

function crc32(buffer) {
  let c = ~0;
  for (const byte of buffer) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

// the sizes Linux panels draw tray icons at (electron/main/tray-icons.ts TRAY_ICON_SIZES), and the
// app icon's sizes for the hicolor theme (electron-builder's linux.icon directory)
const TRAY_SIZES = [16, 22, 24, 32, 48];
const APP_SIZES = [16, 22, 24, 32, 48, 64, 128, 256, 512];
mkdirSync(join(here, 'tray'), { recursive: true });
mkdirSync(join(here, 'icons'), { recursive: true });
for (const [state, color] of Object.entries(STATES)) {
  writeFileSync(join(here, `tray-${state}.svg`), svg(color)); // the console's header shows tray-ok.svg
  for (const size of TRAY_SIZES) writeFileSync(join(here, 'tray', `${state}-${size}.png`), raster(size, color));
}
for (const size of APP_SIZES) writeFileSync(join(here, 'icons', `${size}x${size}.png`), raster(size, STATES.ok));
writeFileSync(join(here, 'icon.png'), raster(256, STATES.ok));
writeFileSync(
  join(here, 'gpushare.desktop'),
  `[Desktop Entry]
Type=Application
Name=gpushare
Comment=See and share the GPUs of a lab workstation
Exec=gpushare start
Icon=gpushare
Categories=Development;Monitor;
Terminal=false
StartupWMClass=gpushare
`,
);
console.log('icons written to', here);
