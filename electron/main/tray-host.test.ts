// The tray-host decision: the session bus's word first, the desktop's name only when the bus cannot
// be asked, and no tray (closing the window quits) where neither says there is a host.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { askWatcherOwned, parseNameHasOwner, trayHostDecision } from './tray-host.js';

test('the session bus decides: a StatusNotifierWatcher means a tray, none means closing quits (even on KDE)', () => {
  assert.equal(trayHostDecision({ watcherOwned: true, currentDesktop: 'GNOME' }).tray, true, 'GNOME with the AppIndicator extension');
  const none = trayHostDecision({ watcherOwned: false, currentDesktop: 'KDE' });
  assert.equal(none.tray, false);
  assert.match(none.why, /closing the window quits/);
});

test('without a bus answer: desktops that host tray icons get one; stock GNOME and unknown desktops quit with the window', () => {
  for (const desktop of ['KDE', 'XFCE', 'X-Cinnamon', 'MATE', 'LXQt', 'Budgie:GNOME', 'ubuntu:GNOME', 'Unity']) {
    assert.equal(trayHostDecision({ watcherOwned: null, currentDesktop: desktop }).tray, true, desktop);
  }
  for (const desktop of ['GNOME', 'GNOME-Classic:GNOME', 'sway', '', undefined]) {
    assert.equal(trayHostDecision({ watcherOwned: null, currentDesktop: desktop }).tray, false, String(desktop));
  }
});

test('gdbus and dbus-send answers are read; anything else is no answer', () => {
  assert.equal(parseNameHasOwner('(true,)\n'), true);
  assert.equal(parseNameHasOwner('(false,)\n'), false);
  assert.equal(parseNameHasOwner('method return time=1.2 sender=org.freedesktop.DBus -> destination=:1.9 serial=3 reply_serial=2\n   boolean true\n'), true);
  assert.equal(parseNameHasOwner('method return …\n   boolean false\n'), false);
  assert.equal(parseNameHasOwner('Error: GDBus.Error:org.freedesktop.DBus.Error.NoReply'), null);
  assert.equal(parseNameHasOwner(''), null);
});

test('the bus is asked with gdbus first, dbus-send only when gdbus gives no answer', async () => {
  const asked: string[] = [];
  const owned = await askWatcherOwned(async (tool) => {
    asked.push(tool);
    return tool === 'gdbus' ? null : '   boolean false\n';
  });
  assert.equal(owned, false);
  assert.deepEqual(asked, ['gdbus', 'dbus-send']);
  assert.equal(await askWatcherOwned(async () => null), null, 'no bus tool, or no session bus');
});
