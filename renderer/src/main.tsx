// Start-up: pick the transport once, feed the stores, render.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { useEngineApiOnce } from './actions/engine-api.js';
import { App } from './App.js';
import { commitCount, startFeed } from './data/feed.js';
import { startMpsFeed } from './data/mps-feed.js';
import { pickTransport } from './transport/transport.js';
import { LAB_PARAM, thisBoxHref } from '../../shared/lab-console.js';
import { LabApp } from './components/lab/LabView.js';
import { labCommitCount, startLabFeed } from './data/lab-feed.js';
import { labTransport } from './transport/lab-transport.js';
import { ipcLabTransport } from './transport/ipc-lab-transport.js';
import { navigationStore } from './stores/navigation-store.js';
import './styles.css';
import './views.css';

const root = createRoot(document.getElementById('root')!);
if (new URLSearchParams(window.location.search).has(LAB_PARAM)) {
  // the Lab view: of `gpushare start --lab` (the hub's lab, no engine of its own), or of the desktop app (its hub in a process of its own, and this box's console beside it)
  const bridge = window.gpushare;
  startLabFeed(bridge ? ipcLabTransport(bridge) : labTransport(window.location));
  Object.defineProperty(window, 'gpushareCommits', { get: labCommitCount });
  root.render(
    <StrictMode>
      <LabApp home={bridge ? thisBoxHref(window.location.href) : undefined} />
    </StrictMode>,
  );
} else {
  const transport = pickTransport();
  useEngineApiOnce(transport.api);
  startFeed(transport);
  startMpsFeed(transport);
  // the desktop app's Lab tab, shown when there is a lab list
  void transport.labStatus?.().then((lab) => navigationStore.setState({ lab }), () => undefined);
  // read by the end-to-end tests and the UI benchmark to know a commit has happened
  Object.defineProperty(window, 'gpushareCommits', { get: commitCount });
  root.render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
