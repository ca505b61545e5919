// One console window's connection to the engine: the window's requests and subscriptions go to
// the engine's socket as they are, the engine's answers and events come back, and the window is
// told when the connection opens or ends (and why), so it never waits on an engine that is gone.
import type { EventMessage, ResponseMessage } from '../../shared/api.js';
import type { ConnectionMessage } from '../../shared/bridge.js';
import type { ReportFile } from '../../shared/usage-report.js';
import { isRequest, QUEUE_LIMIT, relayable } from '../../shared/window-message.js';
import type { LineConnection } from './line-connection.js';
import { asHtmlExport, printedReport, type HtmlPrinter } from './pdf-export.js';

export type ToWindow = ResponseMessage | EventMessage | ConnectionMessage;
/** What goes to a window: a message, or its JSON text as the lab hub's process wrote it (the preload parses it: the main thread does not). */
export type ToWindowOrText = ToWindow | string;

export interface WindowRelay {
  /** A message from the window (already checked to come from our console). */
  receive(message: unknown): void;
  close(): void;
}

export interface RelayOptions {
  /** Prints a report the window asked for as a PDF (webContents.printToPDF); without it the engine refuses format "pdf". */
  printPdf?: HtmlPrinter;
}

export function openWindowRelay(connect: () => Promise<LineConnection>, toWindow: (message: ToWindow) => void, whyClosed: () => string, options: RelayOptions = {}): WindowRelay {
  let connection: LineConnection | null = null;
  /** Requests sent as HTML exports whose answer is printed before the window hears it. */
  const printing = new Set<number>();
  let queue: object[] | null = []; // null once the connection is open or has ended
  const inFlight = new Set<number>();
  let ended: string | null = null;
  let refusal: string | null = null;
  let closedByUs = false;

  const refuse = (id: number, why: string): void => toWindow({ kind: 'response', id, ok: false, error: { code: 'unavailable', message: why } });
  const end = (why: string): void => {
    if (ended !== null) return;
    ended = why;
    // every request still waiting is answered: the window never waits on an engine that is gone
    for (const message of queue ?? []) if (isRequest(message)) refuse(message.id, why);
    for (const id of inFlight) refuse(id, why);
    queue = null;
    inFlight.clear();
    if (!closedByUs) toWindow({ kind: 'connection', state: 'closed', detail: why });
  };
  const printForWindow = (id: number, html: ReportFile): void => {
    printedReport(html, options.printPdf!).then(
      (pdf) => !closedByUs && toWindow({ kind: 'response', id, ok: true, result: pdf }),
      (error: unknown) => !closedByUs && toWindow({ kind: 'response', id, ok: false, error: { code: 'unavailable', message: `The PDF could not be printed: ${error instanceof Error ? error.message : String(error)}` } }),
    );
  };
  const send = (open: LineConnection, message: object): void => {
    if (isRequest(message)) inFlight.add(message.id);
    open.send(message);
  };

  connect().then(
    (opened) => {
      if (closedByUs) return opened.close();
      connection = opened;
      opened.onMessage((message) => {
        const m = message as ResponseMessage | EventMessage;
        if (m?.kind === 'event') return toWindow(m);
        if (m?.kind !== 'response') return;
        // an answer to no request: the engine refuses this connection, and says why
        if (m.id === -1 && !m.ok) refusal = m.error.message;
        if (!inFlight.delete(m.id)) return;
        if (printing.delete(m.id) && m.ok) return void printForWindow(m.id, m.result as ReportFile);
        toWindow(m);
      });
      opened.onClose(() => end(refusal ?? whyClosed()));
      if (opened.closed) return;
      toWindow({ kind: 'connection', state: 'open', detail: null });
      for (const message of queue ?? []) send(opened, message);
      queue = null;
    },
    (error: unknown) => end(`gpushare cannot reach its engine (${error instanceof Error ? error.message : String(error)}).`),
  );

  return {
    receive(message) {
      let checked = relayable(message);
      if (!checked) return;
      const asHtml = options.printPdf && isRequest(checked) ? asHtmlExport(checked as Parameters<typeof asHtmlExport>[0]) : null;
      if (asHtml) {
        printing.add(asHtml.id);
        checked = asHtml;
      }
      if (ended !== null) return isRequest(checked) ? refuse(checked.id, ended) : undefined;
      if (connection) return send(connection, checked);
      if (queue!.length >= QUEUE_LIMIT) return isRequest(checked) ? refuse(checked.id, 'The engine has not answered yet; try again in a moment.') : undefined;
      queue!.push(checked);
    },
    close() {
      closedByUs = true;
      connection?.close();
      end('This window closed its connection.');
    },
  };
}
