// The desktop's PDF export protocol: a window's reports.export "pdf" reaches the engine as "html" under
// the same id, the engine's answer is printed on the way back, and refusals and failures reach the window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LineConnection } from './line-connection.js';
import { asHtmlExport, printedReport } from './pdf-export.js';
import { openWindowRelay, type ToWindow } from './window-relay.js';

const HTML_FILE = { fileName: 'gpushare-usage-by-user-2026-11-23.html', mimeType: 'text/html;charset=utf-8', content: '<html><body><h1>GPU usage</h1></body></html>' };
const PDF_BYTES = new TextEncoder().encode('%PDF-1.7\n%fake but well-formed head\n');

/** An engine connection that records what it is sent and answers each request with `answer`. */
function fakeEngine(answer: (request: { id: number; method: string; params: unknown }) => object) {
  const sent: Array<{ id: number; method: string; params: unknown }> = [];
  let onMessage: (message: unknown) => void = () => undefined;
  const connection: LineConnection = {
    send(message) {
      const request = message as { kind: string; id: number; method: string; params: unknown };
      if (request.kind !== 'request') return;
      sent.push({ id: request.id, method: request.method, params: request.params });
      queueMicrotask(() => onMessage({ kind: 'response', id: request.id, ...answer(request) }));
    },
    onMessage(listener) {
      onMessage = listener;
      return () => undefined;
    },
    onClose: () => () => undefined,
    closed: false,
    close: () => undefined,
  };
  return { sent, connection };
}

function windowHears() {
  const heard: ToWindow[] = [];
  let wake: () => void = () => undefined;
  return {
    heard,
    send: (m: ToWindow) => {
      heard.push(m);
      wake();
    },
    next: (n: number) => new Promise<ToWindow[]>((resolve) => {
      const check = () => (heard.length >= n ? resolve(heard) : undefined);
      wake = check;
      check();
    }),
  };
}

const params = { since: 0, until: 1_000, by: 'user', format: 'pdf' };

test('a PDF export goes to the engine as the HTML export with the same id; the window gets the printed PDF', async () => {
  const engine = fakeEngine(() => ({ ok: true, result: HTML_FILE }));
  const printed: string[] = [];
  const window = windowHears();
  const relay = openWindowRelay(async () => engine.connection, window.send, () => 'gone', { printPdf: async (html) => (printed.push(html), PDF_BYTES) });
  relay.receive({ kind: 'request', id: 7, method: 'reports.export', params });
  const heard = await window.next(2);
  assert.deepEqual(engine.sent, [{ id: 7, method: 'reports.export', params: { ...params, format: 'html' } }]);
  assert.deepEqual(printed, [HTML_FILE.content]);
  const answer = heard[1] as { id: number; ok: true; result: { fileName: string; mimeType: string; content: string; encoding: string } };
  assert.equal(answer.id, 7);
  assert.equal(answer.result.fileName, 'gpushare-usage-by-user-2026-11-23.pdf');
  assert.equal(answer.result.mimeType, 'application/pdf');
  assert.equal(answer.result.encoding, 'base64');
  assert.deepEqual(Buffer.from(answer.result.content, 'base64'), Buffer.from(PDF_BYTES));
});

test('the engine\'s refusal (rights, bad parameters) reaches the window as it is, and nothing is printed', async () => {
  const engine = fakeEngine(() => ({ ok: false, error: { code: 'invalid-params', message: 'by must be one of user, job, gpu.' } }));
  let printed = 0;
  const window = windowHears();
  const relay = openWindowRelay(async () => engine.connection, window.send, () => 'gone', { printPdf: async () => (printed++, PDF_BYTES) });
  relay.receive({ kind: 'request', id: 3, method: 'reports.export', params: { ...params, by: 'planet' } });
  const heard = await window.next(2);
  assert.deepEqual(heard[1], { kind: 'response', id: 3, ok: false, error: { code: 'invalid-params', message: 'by must be one of user, job, gpu.' } });
  assert.equal(printed, 0);
});

test('a print that fails, or gives no PDF, is an error the window can show', async () => {
  for (const [printer, why] of [
    [async () => Promise.reject(new Error('printToPDF: the page did not load')), 'The PDF could not be printed: printToPDF: the page did not load'],
    [async () => new TextEncoder().encode('<html>'), 'The PDF could not be printed: Printing the report gave no PDF.'],
  ] as const) {
    const engine = fakeEngine(() => ({ ok: true, result: HTML_FILE }));
    const window = windowHears();
    const relay = openWindowRelay(async () => engine.connection, window.send, () => 'gone', { printPdf: printer });
    relay.receive({ kind: 'request', id: 9, method: 'reports.export', params });
    const heard = await window.next(2);
    assert.deepEqual(heard[1], { kind: 'response', id: 9, ok: false, error: { code: 'unavailable', message: why } });
  }
});

test('other requests, and a relay without a printer, pass through unchanged', async () => {
  const engine = fakeEngine(() => ({ ok: true, result: { fileName: 'x.csv', mimeType: 'text/csv', content: 'a,b\n' } }));
  const window = windowHears();
  const relay = openWindowRelay(async () => engine.connection, window.send, () => 'gone', { printPdf: async () => PDF_BYTES });
  relay.receive({ kind: 'request', id: 1, method: 'reports.export', params: { ...params, format: 'csv' } });
  await window.next(2);
  const bare = fakeEngine(() => ({ ok: false, error: { code: 'invalid-params', message: 'format must be one of html, csv, json.' } }));
  const bareWindow = windowHears();
  openWindowRelay(async () => bare.connection, bareWindow.send, () => 'gone').receive({ kind: 'request', id: 2, method: 'reports.export', params });
  await bareWindow.next(2);
  assert.deepEqual(engine.sent[0].params, { ...params, format: 'csv' });
  assert.deepEqual(bare.sent[0].params, params, 'the browser console\'s engine still refuses "pdf" itself');
});

test('asHtmlExport picks out reports.export with format "pdf" only; printedReport refuses a non-HTML answer', async () => {
  const request = (method: string, p: unknown) => ({ kind: 'request' as const, id: 1, method, params: p });
  assert.deepEqual(asHtmlExport(request('reports.export', params))?.params, { ...params, format: 'html' });
  assert.equal(asHtmlExport(request('reports.export', { ...params, format: 'html' })), null);
  assert.equal(asHtmlExport(request('reports.query', params)), null);
  assert.equal(asHtmlExport(request('reports.export', null)), null);
  assert.equal(asHtmlExport(request('reports.export', 'pdf')), null);
  await assert.rejects(printedReport({ fileName: 'x.csv', mimeType: 'text/csv', content: '' }, async () => PDF_BYTES), /answered a PDF export with text\/csv/);
});
