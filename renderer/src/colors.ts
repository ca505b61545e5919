// One stable colour per process, the same in every chart, bar and table row.
export const OTHERS_COLOR = '#5b6475';

const SATURATION = 0.62;
const LIGHTNESS = 0.58;
const hueOf = (pid: number): number => Math.round((pid * 137.508) % 360);

export function processColor(pid: number): string {
  return `hsl(${hueOf(pid)} ${SATURATION * 100}% ${LIGHTNESS * 100}%)`;
}

const rgbCache = new Map<number, readonly [number, number, number]>();

/** processColor as 0–255 red, green, blue, for pixels drawn by hand. */
export function processRgb(pid: number): readonly [number, number, number] {
  let rgb = rgbCache.get(pid);
  if (!rgb) {
    const hue = hueOf(pid);
    const a = SATURATION * Math.min(LIGHTNESS, 1 - LIGHTNESS);
    const channel = (n: number): number => {
      const k = (n + hue / 30) % 12;
      return Math.round(255 * (LIGHTNESS - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
    };
    if (rgbCache.size > 4096) rgbCache.clear();
    rgbCache.set(pid, (rgb = [channel(0), channel(8), channel(4)]));
  }
  return rgb;
}
