// Start-up: pick the transport once, feed the stores, render.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { useEngineApiOnce } from './actions/engine-api.js';
import { App } from './App.js';
import { commitCount, startFeed } from './data/feed.js';
import { startMpsFeed } from './data/mps-feed.js';
import { pickTransport } from './transport/transport.js';
import './styles.css';
import './views.css';

const transport = pickTransport();
useEngineApiOnce(transport.api);
startFeed(transport);
startMpsFeed(transport);
// read by the end-to-end tests and the UI benchmark to know a commit has happened
Object.defineProperty(window, 'gpushareCommits', { get: commitCount });
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
