// Which file of the built renderer an app://console/… request names: none outside that folder,
// whatever the encoding, and none for another host or a path that is not percent-encoding.
import { join, normalize, sep } from 'node:path';
import { isConsoleUrl } from './trust.js';

export function rendererFile(root: string, url: string): string | null {
  if (!isConsoleUrl(url)) return null;
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return null; // "%E0%A4%A" is no path
  }
  if (path.includes('\0')) return null;
  const file = normalize(join(root, path === '/' ? '/index.html' : path));
  return file.startsWith(root + sep) ? file : null;
}
