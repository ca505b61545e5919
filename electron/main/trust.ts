// Which pages may reach the engine: our console only. Decided from protocol and host, because
// the WHATWG origin of a non-special scheme such as app: is the string "null" for every URL.
export const APP_SCHEME = 'app';
export const APP_HOST = 'console';
export const CONSOLE_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** Is this URL a page of our console (app://console/…, no port, no user, no look-alike host)? */
export function isConsoleUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '';
}

/** The parts of Electron's WebFrameMain that trust looks at. */
export interface SenderFrame {
  url: string;
  parent: unknown;
}

/** An IPC message counts only from the top frame of our console window, showing our console. */
export function isTrustedSender(frame: SenderFrame | null | undefined, fromOurWindow: boolean): boolean {
  return !!frame && frame.parent === null && fromOurWindow && isConsoleUrl(frame.url);
}
