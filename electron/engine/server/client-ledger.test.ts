// The ledger of what socket clients hold, per user and in all: which connection is refused, which
// client is disconnected when a user's (or everyone's) unread answers would pass their bound, and
// what is logged. Clients are stand-ins whose unread bytes the test sets: counts and bytes, no sockets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientLedger, type LedgerClient } from './client-ledger.js';

const LIMITS = { perUser: 3, total: 5, unreadBytesPerUser: 1000, unreadBytesTotal: 1500 };

interface FakeClient extends LedgerClient {
  held: number;
  evicted: string | null;
}

function setup() {
  const log: string[] = [];
  const ledger = new ClientLedger(LIMITS, '/etc/gpushare/config.json', (line) => log.push(line));
  const connect = (uid: number): FakeClient => {
    const client: FakeClient = { uid, user: `u${uid}`, held: 0, evicted: null, unread: () => client.held, evict: (reason) => (client.evicted = reason) };
    ledger.add(client);
    return client;
  };
  /** Write `bytes` to client as the outbox does: room first, then the bytes stay unread. */
  const write = (client: FakeClient, bytes: number): boolean => {
    if (!ledger.makeRoom(client, bytes)) return false;
    client.held += bytes;
    return true;
  };
  return { ledger, log, connect, write };
}

test('a user past connections.perUser is refused with why, once in the log per episode; others and root are not; one closed lets them in again', () => {
  const { ledger, log, connect } = setup();
  const mallory = [connect(1001), connect(1001), connect(1001)];
  const refusal = ledger.refusal(1001, () => 'mallory');
  assert.match(refusal ?? '', /^mallory \(uid 1001\) already has 3 connections open to gpushare, the most one user may have \(connections\.perUser in \/etc\/gpushare\/config\.json\)/);
  assert.notEqual(ledger.refusal(1001, () => 'mallory'), null);
  assert.equal(log.length, 1, 'logged once, not once per attempt');
  assert.equal(ledger.refusal(1002, () => 'alice'), null, 'another user is let in');
  assert.equal(ledger.refusal(0, () => 'root'), null, 'root is let in');
  ledger.remove(mallory[0]);
  assert.equal(ledger.refusal(1001, () => 'mallory'), null, 'under the bound again');
  connect(1001);
  assert.notEqual(ledger.refusal(1001, () => 'mallory'), null);
  assert.equal(log.length, 2, 'a new episode is logged again');
  assert.deepEqual(ledger.use(1001), { open: 3, maxOpen: 3, unreadBytes: 0, maxUnreadBytes: 1000 });
});

test('past connections.total every user but root is refused, and the log names who holds the connections', () => {
  const { ledger, log, connect } = setup();
  for (let i = 0; i < 3; i++) connect(1001);
  connect(1002);
  connect(0);
  assert.match(ledger.refusal(1003, () => 'carol') ?? '', /already has 5 connections open, the most it serves at once \(connections\.total/);
  assert.equal(ledger.refusal(0, () => 'root'), null);
  assert.match(log[0], /uid 1001: 3/);
  assert.equal(ledger.use(0).maxOpen, null, 'root is never refused');
});

test("a user's unread answers past unreadBytesPerUser: the connection holding the most is disconnected, never the reading one, and the reason is given", () => {
  const { ledger, connect, write } = setup();
  const [stuck, slow, reader] = [connect(1001), connect(1001), connect(1001)];
  const alice = connect(1002);
  assert.ok(write(stuck, 600));
  assert.ok(write(slow, 300));
  assert.ok(write(alice, 400), "another user's bytes do not count against mallory's bound");
  assert.ok(write(reader, 200), 'room made for the reading client');
  assert.match(stuck.evicted ?? '', /u1001 \(uid 1001\)'s connections together would leave more than 1000 bytes unread, the most one user's may \(connections\.unreadBytesPerUser in .*\), and it held the most \(600 bytes\) unread/);
  assert.deepEqual([slow.evicted, reader.evicted, alice.evicted], [null, null, null]);
  assert.equal(ledger.use(1001).unreadBytes, 500);
  assert.equal(ledger.use(1001).open, 2, 'the disconnected one is no longer counted');
});

test('a client that holds the most itself is disconnected instead of being written to; one that has read everything still gets a line larger than the bound', () => {
  const { ledger, connect, write } = setup();
  const [stuck, other] = [connect(1001), connect(1001)];
  assert.ok(write(stuck, 900));
  assert.equal(write(stuck, 200), false, 'not written');
  assert.match(stuck.evicted ?? '', /held the most \(900 bytes\)/);
  assert.ok(write(other, 5000), 'nothing else unread: the line goes whole to a client that reads');
  assert.equal(ledger.use(1001).unreadBytes, 5000);
});

test('what a client read is taken off at drain; everyone together past unreadBytesTotal loses the largest holder, whoever it is', () => {
  const { ledger, connect, write } = setup();
  const a = connect(1001);
  const b = connect(1002);
  const c = connect(1003);
  assert.ok(write(a, 900));
  a.held = 0; // it read it all
  ledger.drained(a);
  assert.ok(write(b, 700));
  assert.ok(write(c, 600));
  assert.ok(write(a, 400), 'a read what it had: 1300 + 400 is past 1500, so the largest (b) goes');
  assert.match(b.evicted ?? '', /all clients together would leave more than 1500 bytes unread \(connections\.unreadBytesTotal in .*\), and it held the most \(700 bytes\)/);
  assert.deepEqual([a.evicted, c.evicted], [null, null]);
});
