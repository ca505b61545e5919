// One size convention for the CLI, the console and the engine: "20G" is 20 GiB (2^30 bytes),
// whether written 20G, 20GB or 20GiB. MIG profile names ("1g.10gb") are nominal and not sizes.

const SIZE_UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

export const SIZE_HELP = 'sizes are powers of 1024: 20G = 20GB = 20GiB = 20 × 2^30 bytes';

/**
 * A memory size as people write it: "20G", "512M", "1.5G", "4096" (bytes); K/M/G/T are
 * powers of 1024 and may be followed by "B" or "iB". Throws a sentence naming the input.
 */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(text);
  const bytes = match ? Math.round(Number(match[1]) * SIZE_UNITS[match[2].toUpperCase()]) : NaN;
  if (/^\s*-/.test(text)) throw new RangeError(`"${text}" is not a memory size: it must be positive, like 20G (GiB) or 512M (MiB).`);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new RangeError(`"${text}" is not a memory size: use a positive number with K, M, G or T (powers of 1024), like 512M, 20G or 1.5G.`);
  }
  return bytes;
}

/** A size for a person: "20G", "1.5G", "512M". */
export function formatByteSize(bytes: number): string {
  for (const unit of ['T', 'G', 'M', 'K'] as const) {
    const value = bytes / SIZE_UNITS[unit];
    if (value >= 1) return `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`;
  }
  return `${bytes}B`;
}
