// Trust is decided on real URLs as Chromium reports them for our window and for everything else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONSOLE_URL, isConsoleUrl, isTrustedSender } from './trust.js';

test('our console\'s own pages are trusted, whatever their path, query or fragment', () => {
  for (const url of [CONSOLE_URL, 'app://console/', 'app://console/index.html?view=reports#top', 'app://console/assets/index-3f2a.js']) {
    assert.equal(isConsoleUrl(url), true, url);
  }
});

test('other schemes, file: pages and look-alike hosts are not', () => {
  for (const url of [
    'file:///opt/gpushare/dist/renderer/index.html',
    'http://console/index.html',
    'https://console/index.html',
    'http://127.0.0.1:4000/?token=abc',
    'app://console.evil.example/index.html',
    'app://consolex/index.html',
    'app://evil/console/index.html',
    'app://evil/?app://console/',
    'app://console@evil/index.html',
    'app://user@console/index.html',
    'app://console:8080/index.html',
    'app://console./index.html',
    'app://CONSOLE/index.html',
    'app:console/index.html',
    'apps://console/index.html',
    'javascript:alert(1)//app://console/',
    'data:text/html,<p>app://console/</p>',
    'about:blank',
    '',
    'not a url',
  ]) {
    assert.equal(isConsoleUrl(url), false, url);
  }
});

test('an IPC message is trusted only from the top frame of our window showing our console', () => {
  const top = { url: CONSOLE_URL, parent: null };
  assert.equal(isTrustedSender(top, true), true);
  assert.equal(isTrustedSender(top, false), false, 'another window (say a second BrowserWindow) is not the console');
  assert.equal(isTrustedSender({ url: CONSOLE_URL, parent: top }, true), false, 'a subframe, even one showing our page');
  assert.equal(isTrustedSender({ url: 'https://example.com/', parent: null }, true), false, 'our window navigated away');
  assert.equal(isTrustedSender({ url: 'file:///tmp/x.html', parent: null }, true), false);
  assert.equal(isTrustedSender(null, true), false, 'a frame already gone');
  assert.equal(isTrustedSender(undefined, true), false);
});
