// A report file from the engine (or the desktop app's printer) made into a Blob and saved.
// DOM-free but for what it is handed, so the decoding and saving are tested in Node.
import type { ReportFile } from '../../../shared/usage-report.js';

/** The file's bytes: its text as is, or its base64 content decoded (the desktop app's PDF). */
export function reportFileBlob(file: ReportFile): Blob {
  if (file.encoding === undefined) return new Blob([file.content], { type: file.mimeType });
  if (file.encoding !== 'base64') throw new Error(`${file.fileName} came in an encoding the console does not know (${String(file.encoding)}).`);
  let binary: string;
  try {
    binary = atob(file.content);
  } catch {
    throw new Error(`${file.fileName} came as base64 that cannot be decoded.`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // a PDF that does not start as one would open as a broken file: say so instead of saving it
  if (file.mimeType === 'application/pdf' && binary.slice(0, 5) !== '%PDF-') throw new Error(`${file.fileName} is not a PDF (it does not start with %PDF-).`);
  return new Blob([bytes], { type: file.mimeType });
}

/** What saving needs from the page: a link to click and object URLs. */
export interface SaveTarget {
  createLink(): { href: string; download: string; click(): void; remove(): void };
  append(link: unknown): void;
  createObjectURL(blob: Blob): string;
  revokeObjectURL(url: string): void;
  later(run: () => void, ms: number): void;
}

/** The browser's download: a link to an object URL, clicked; the URL is freed once the download has it. */
export function saveBlob(fileName: string, blob: Blob, target: SaveTarget): void {
  const url = target.createObjectURL(blob);
  const link = target.createLink();
  link.href = url;
  link.download = fileName;
  target.append(link);
  link.click();
  link.remove();
  target.later(() => target.revokeObjectURL(url), 10_000);
}
