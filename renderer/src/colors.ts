// One stable colour per process, the same in every chart, bar and table row.
export const OTHERS_COLOR = '#5b6475';

export function processColor(pid: number): string {
  const hue = Math.round((pid * 137.508) % 360);
  return `hsl(${hue} 62% 58%)`;
}
