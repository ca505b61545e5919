// The top bar as every console page starts it (the box console's Header, the Lab view's): the brand
// and the connection's state, then what the page adds; a sentence about the connection goes below it.
import type { ReactNode } from 'react';
import appIcon from '../../../assets/tray-ok.svg';
import type { ConnectionState } from '../transport/transport.js';

const STATE_WORDS: Record<ConnectionState, string> = { open: 'live', connecting: 'connecting…', closed: 'disconnected' };

export function TopBar({ connection, detail, children }: { connection: ConnectionState; detail: string | null; children: ReactNode }) {
  return (
    <>
      <header className="top-bar">
        <div className="brand">
          <img src={appIcon} alt="" width={20} height={20} />
          <span>gpushare</span>
        </div>
        <div className={`connection connection-${connection}`} title={detail ?? undefined}>
          <span className="dot" aria-hidden="true" /> {STATE_WORDS[connection]}
        </div>
        {children}
      </header>
      {/* a full-width bar: a sentence in the top bar squeezed the tabs into two lines */}
      {detail && (
        <div className="connection-detail" role="alert">
          {detail}
        </div>
      )}
    </>
  );
}
