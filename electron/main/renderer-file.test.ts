// app://console/ serves the built renderer and nothing beside it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rendererFile } from './renderer-file.js';

const ROOT = '/opt/gpushare/resources/app.asar/dist/renderer';

test('our pages map into the renderer folder; the bare origin is index.html', () => {
  assert.equal(rendererFile(ROOT, 'app://console/index.html'), `${ROOT}/index.html`);
  assert.equal(rendererFile(ROOT, 'app://console/'), `${ROOT}/index.html`);
  assert.equal(rendererFile(ROOT, 'app://console/assets/index-3f2a.js?v=1#x'), `${ROOT}/assets/index-3f2a.js`);
  assert.equal(rendererFile(ROOT, 'app://console/assets/a%20b.css'), `${ROOT}/assets/a b.css`);
  assert.equal(rendererFile(ROOT, 'app://console/../../../etc/passwd'), `${ROOT}/etc/passwd`, 'the URL parser resolves dot segments at the root: still inside');
});

test('nothing outside it, however encoded; no other host; no broken encoding', () => {
  // dot segments, plain or %2e, are resolved by the URL parser at the root: they stay inside
  for (const url of ['app://console/%2e%2e/%2e%2e/etc/passwd', 'app://console/%2e%2e']) {
    const file = rendererFile(ROOT, url);
    assert.ok(file === null || file.startsWith(`${ROOT}/`), `${url} → ${file}`);
  }
  for (const url of [
    'app://console/assets/%2e%2e%2f%2e%2e%2f..%2fpackage.json', // an encoded slash is only a slash once decoded: caught after
    'app://console/..%2f..%2f..%2fetc/passwd',
    'app://evil/index.html',
    'file:///opt/gpushare/resources/app.asar/dist/renderer/index.html',
    'app://console/%E0%A4%A',
    'app://console/index.html%00.png',
  ]) {
    assert.equal(rendererFile(ROOT, url), null, url);
  }
});
