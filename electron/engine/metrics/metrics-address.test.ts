// `--metrics` values: loopback unless another address is named; every bad value is refused with a sentence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricsAddressError, parseMetricsAddress } from './metrics-address.js';

test('a bare port, ":port" and localhost mean loopback; a named address is kept', () => {
  assert.deepEqual(parseMetricsAddress('9400'), { host: '127.0.0.1', port: 9400 });
  assert.deepEqual(parseMetricsAddress(':9400'), { host: '127.0.0.1', port: 9400 });
  assert.deepEqual(parseMetricsAddress('localhost:9400'), { host: '127.0.0.1', port: 9400 });
  assert.deepEqual(parseMetricsAddress('0.0.0.0:9400'), { host: '0.0.0.0', port: 9400 });
  assert.deepEqual(parseMetricsAddress('10.1.2.3:80'), { host: '10.1.2.3', port: 80 });
  assert.deepEqual(parseMetricsAddress('[::1]:9400'), { host: '::1', port: 9400 });
  assert.deepEqual(parseMetricsAddress('[::]:9400'), { host: '::', port: 9400 });
  assert.deepEqual(parseMetricsAddress('0'), { host: '127.0.0.1', port: 0 }, 'any free port');
});

test('a bad value is refused naming what is wrong', () => {
  const refused = (value: string, problem: RegExp) => assert.throws(() => parseMetricsAddress(value), (error: unknown) => error instanceof MetricsAddressError && problem.test(error.message), value);
  refused('', /needs a port or ADDRESS:PORT, got ""/);
  refused('65536', /"65536" is not a port number \(0-65535\)/);
  refused('-1', /"-1" is not a port number/);
  refused('9400:', /"" is not a port number/);
  refused('127.0.0.1', /"127.0.0.1" is not a port number/);
  refused('metrics.example:9400', /"metrics.example" is not an IP address/);
  refused('1.2.3:99', /"1.2.3" is not an IP address/);
  refused('::1:9400', /IPv6 address in brackets/);
  refused('[::1]', /"\[::1\]" is not a port number|is not a port number/);
  refused('[nope]:9400', /"nope" is not an IP address/);
});
