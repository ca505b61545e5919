// The console's build: renderer/ → dist/renderer, served by the web server and app://.
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './', // relative URLs work over http://127.0.0.1 and app:// alike
  publicDir: false, // the icons are imported, so they get hashed names
  plugins: [react()],
  build: {
    outDir: here('../dist/renderer'),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1200,
  },
  logLevel: 'warn',
});
