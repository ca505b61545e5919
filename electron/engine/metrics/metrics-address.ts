// Where the metrics endpoint listens, from `--metrics`: "9400", ":9400", "127.0.0.1:9400",
// "[::1]:9400", "0.0.0.0:9400". Loopback unless an address that is not loopback is named.
import { isIP } from 'node:net';

export interface MetricsAddress {
  host: string;
  /** 0: any free port (tests); the listener tells the one it got. */
  port: number;
}

export const LOOPBACK = '127.0.0.1';

export class MetricsAddressError extends Error {
  override name = 'MetricsAddressError';
}

/** The address `text` names; a MetricsAddressError saying what is wrong with it otherwise, naming `setting` (the flag or config key). */
export function parseMetricsAddress(text: string, setting = '--metrics'): MetricsAddress {
  const value = text.trim();
  const example = 'use PORT (loopback), ADDRESS:PORT or [IPv6]:PORT, like 9400, 127.0.0.1:9400 or 0.0.0.0:9400';
  if (value === '') throw new MetricsAddressError(`${setting} needs a port or ADDRESS:PORT, got "": ${example}.`);
  if (!value.startsWith('[') && value.indexOf(':') !== value.lastIndexOf(':')) throw new MetricsAddressError(`${setting} "${text}": write an IPv6 address in brackets, like [::1]:9400.`);
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):(.*)$/.exec(value);
  const host = match ? (match[1] ?? match[2]) : '';
  const portText = match ? match[3] : value;
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
    throw new MetricsAddressError(`${setting} "${text}": "${portText}" is not a port number (0-65535); ${example}.`);
  }
  if (host !== '' && host !== 'localhost' && isIP(host) === 0) {
    throw new MetricsAddressError(`${setting} "${text}": "${host}" is not an IP address; ${example}.`);
  }
  return { host: host === '' || host === 'localhost' ? LOOPBACK : host, port: Number(portText) };
}

/** The address as a URL host: IPv6 in brackets. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
