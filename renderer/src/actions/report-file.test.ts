// The desktop app's PDF comes over the bridge as base64 (electron/main/pdf-export.ts): the console
// decodes it to the very bytes printed and saves them under the file's name; a broken one is named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportFileBlob, saveBlob, type SaveTarget } from './report-file.js';

// a PDF's first bytes and some that are not text (a base64 round trip through a string would mangle them)
const pdfBytes = Uint8Array.from([...Buffer.from('%PDF-1.7\n%'), 0xe2, 0xe3, 0xcf, 0xd3, 0x00, 0xff, 0x0a]);
const pdfFile = { fileName: 'gpushare-usage-by-user-2026-11-23.pdf', mimeType: 'application/pdf', content: Buffer.from(pdfBytes).toString('base64'), encoding: 'base64' as const };

test('a base64 PDF becomes a Blob of exactly the printed bytes, typed application/pdf', async () => {
  const blob = reportFileBlob(pdfFile);
  assert.equal(blob.type, 'application/pdf');
  assert.deepEqual(new Uint8Array(await blob.arrayBuffer()), pdfBytes);
});

test('a text report (no encoding) is saved as its text', async () => {
  const blob = reportFileBlob({ fileName: 'r.html', mimeType: 'text/html', content: '<p>é</p>' });
  assert.equal(blob.type, 'text/html');
  assert.equal(await blob.text(), '<p>é</p>');
});

test('content that is not base64, a PDF that is not one, or an unknown encoding is refused naming the file', () => {
  assert.throws(() => reportFileBlob({ ...pdfFile, content: '%%% not base64 %%%' }), /gpushare-usage-by-user-2026-11-23\.pdf came as base64 that cannot be decoded/);
  assert.throws(() => reportFileBlob({ ...pdfFile, content: Buffer.from('<html>').toString('base64') }), /\.pdf is not a PDF \(it does not start with %PDF-\)/);
  assert.throws(() => reportFileBlob({ ...pdfFile, encoding: 'hex' as unknown as 'base64' }), /encoding the console does not know \(hex\)/);
});

test('saving clicks a link to the Blob under the file name, then frees its URL', async () => {
  const events: string[] = [];
  let saved: Blob | null = null;
  let pending: (() => void) | null = null;
  const link = { href: '', download: '', click: () => events.push(`click ${link.href} as ${link.download}`), remove: () => events.push('remove') };
  const target: SaveTarget = {
    createLink: () => link,
    append: (l) => events.push(l === link ? 'append' : 'append another'),
    createObjectURL: (blob) => ((saved = blob), 'blob:report-1'),
    revokeObjectURL: (url) => events.push(`revoke ${url}`),
    later: (run, ms) => ((pending = run), events.push(`later ${ms}`)),
  };
  saveBlob(pdfFile.fileName, reportFileBlob(pdfFile), target);
  assert.deepEqual(events, ['append', 'click blob:report-1 as gpushare-usage-by-user-2026-11-23.pdf', 'remove', 'later 10000']);
  assert.deepEqual(new Uint8Array(await saved!.arrayBuffer()), pdfBytes);
  (pending as (() => void) | null)?.();
  assert.equal(events.at(-1), 'revoke blob:report-1');
});
