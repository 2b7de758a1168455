// Builds the example from the repository's node_modules and its compiled client (npx tsc first):
// `npx vite build examples/grids` (or vite's JS API, as test/browser/examples-grids.test.ts does).
// querylib/client/* resolve to the compiled dist/, as they would from the published package.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const dist = (path) => fileURLToPath(new URL(`../../dist/lib/client/${path}`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  resolve: {
    alias: {
      "querylib/client/mui": dist("grids/mui.js"),
      "querylib/client/refine": dist("grids/refine.js"),
    },
  },
  build: {
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    reportCompressedSize: false,
    // MUI's modules start with "use client" (for React Server Components): meaningless in a client bundle.
    rolldownOptions: { onwarn: (warning, warn) => (warning.code === "MODULE_LEVEL_DIRECTIVE" ? undefined : warn(warning)) },
  },
  server: {
    // `npx vite examples/grids` with the sample app on :3000 (npm start).
    proxy: { "/api": "http://127.0.0.1:3000", "/qp-admin": "http://127.0.0.1:3000" },
  },
});
