import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { expect, it } from 'vitest';

// The core of the Gateway clients (api-client.ts, sse-client.ts) says it is browser-safe, for the
// web mailbox: it and the modules it shares with a browser must bundle without a single Node
// built-in and without undici. The Node parts (gateway-client, node-transfer, node-sse) stay out.
const CORE = [
  'browser.ts',
  'api-client.ts',
  'api-errors.ts',
  'http-transport.ts',
  'person-api.ts',
  'sse-client.ts',
  'sse-decoder.ts',
].map((f) => fileURLToPath(new URL(`../../src/client/${f}`, import.meta.url)));
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

it('the browser-safe client modules (ApiClient, SseClient) bundle for the browser without Node built-ins or undici', async () => {
  const found = new Set<string>();
  const result = await build({
    entryPoints: CORE,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    outdir: 'out',
    logLevel: 'silent',
    conditions: ['@agentmail/source', 'browser', 'import'],
    plugins: [
      {
        name: 'node-trap',
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.path.startsWith('node:') || BUILTINS.has(args.path) || args.path === 'undici') {
              found.add(`${args.path} (imported by ${args.importer})`);
              return { path: args.path, external: true };
            }
            return undefined;
          });
        },
      },
    ],
  });
  expect(result.errors).toEqual([]);
  expect([...found]).toEqual([]);
  const api = result.outputFiles.find((f) => f.path.endsWith('api-client.js'))?.text ?? '';
  expect(api).toContain('AM_GATEWAY_URL_INVALID'); // the real client, not an empty module
  const sse = result.outputFiles.find((f) => f.path.endsWith('sse-client.js'))?.text ?? '';
  expect(sse).toContain('last-event-id'); // the real reader, reconnect and all
});
