/**
 * Real Chromium for the web mailbox tests: Debian's `chromium` driven by `playwright-core` with
 * `executablePath` (no browser download), one browser per test file, scratch HOME and TMPDIR (it
 * writes dot-directories there), always closed. Also: the web app built once per file with vite
 * into a temp directory (handed to the Gateway with `--web-dir`), sign-in, and a page's problems
 * (console errors, CSP violations, failed requests, dialogs) collected as events to assert on.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild, type Stack, type StackOptions, startStack } from '@agentmail/testkit';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';

/** Where Debian installs Chromium; `AGENTMAIL_CHROMIUM` names another binary. */
export const CHROMIUM_PATH = process.env.AGENTMAIL_CHROMIUM ?? '/usr/bin/chromium';

/** Root of the web package. */
export const WEB_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A phone: 390 × 844 CSS px at 3× (an iPhone 12-14 class screen), touch, mobile layout. */
export const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
};

/** A desktop window. */
export const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 860 } };

/** Time a page waits for an element or a text, in ms (a real pi turn runs between). @default 60_000 */
export const UI_TIMEOUT_MS = 60_000;

/**
 * Build the web app (vite, from the sources) once per source version, shared by every test file
 * (testkit's `cachedBuild`); resolves with the directory (`remove()` leaves it in place).
 */
export async function buildWeb(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await cachedBuild({
    packageRoot: WEB_ROOT,
    name: 'web-page',
    build: async (outDir) => {
      const { build } = await import('vite');
      await build({
        configFile: join(WEB_ROOT, 'vite.config.ts'),
        root: WEB_ROOT,
        logLevel: 'warn',
        build: { outDir, emptyOutDir: true, reportCompressedSize: false },
      });
    },
  });
  return { dir, remove: async () => {} };
}

/** A running Chromium with its scratch directory. */
export interface TestBrowser {
  browser: Browser;
  /** A new context (own cookies) with the page's problems recorded. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * Launch headless Chromium.
 * @throws Error naming the missing package and the install command when Chromium is not installed.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install --no-install-recommends chromium fonts-noto-cjk), or set AGENTMAIL_CHROMIUM`,
    );
  const scratch = await mkdtemp(join(tmpdir(), 'agentmail-chromium-'));
  await mkdir(join(scratch, 'tmp'), { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    env: { ...process.env, HOME: scratch, TMPDIR: join(scratch, 'tmp') },
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async context(options = DESKTOP) {
      const c = await browser.newContext({ ...options, acceptDownloads: true, locale: 'en-US' });
      c.setDefaultTimeout(UI_TIMEOUT_MS);
      contexts.push(c);
      return c;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** What went wrong in a page: console errors (CSP violations show there), uncaught errors, dialogs. */
export interface PageProblems {
  console: string[];
  errors: string[];
  dialogs: string[];
  /** Requests to anywhere but the Gateway's origin. */
  foreign: string[];
}

/** Record a page's problems (call before it loads anything); dialogs are dismissed unless `acceptDialogs`. */
export function watch(page: Page, origin: string, options: { acceptDialogs?: boolean } = {}): PageProblems {
  const problems: PageProblems = { console: [], errors: [], dialogs: [], foreign: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') problems.console.push(m.text());
  });
  page.on('pageerror', (e) => problems.errors.push(e.message));
  page.on('dialog', (d) => {
    problems.dialogs.push(`${d.type()}: ${d.message()}`);
    void (options.acceptDialogs ? d.accept() : d.dismiss());
  });
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'))
      problems.foreign.push(url);
  });
  return problems;
}

/** Open the mailbox in `page` and sign in with `token` through the form. */
export async function signIn(page: Page, origin: string, token: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Your user token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** Write a screenshot to the package's `docs/` (README pictures) when `AGENTMAIL_SCREENSHOTS` is set, else to a temp file. */
export async function screenshot(page: Page, name: string): Promise<{ path: string; bytes: number }> {
  const dir = process.env.AGENTMAIL_SCREENSHOTS
    ? join(WEB_ROOT, 'docs')
    : join(tmpdir(), 'agentmail-web-shots');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  const png = await page.screenshot({ fullPage: false });
  await writeFile(path, png);
  return { path, bytes: png.length };
}

/** A Gateway stack serving a fresh build of the web app, and one browser for it. */
export interface WebStack {
  stack: Stack;
  browser: TestBrowser;
  /** The Gateway's origin (the mailbox is at `${origin}/`). */
  origin: string;
  /**
   * A new browser context signed in as `token`; `before` runs on the page first (routes), dialogs
   * are dismissed unless `acceptDialogs`.
   */
  open(
    token: string,
    options?: BrowserContextOptions,
    extra?: { before?: (page: Page) => Promise<unknown>; acceptDialogs?: boolean },
  ): Promise<{ page: Page; problems: PageProblems }>;
  close(): Promise<void>;
}

/** Build the web app, start a stack whose Gateway serves it, launch Chromium. Undone on failure. */
export async function startWebStack(options: StackOptions = {}): Promise<WebStack> {
  const web = await buildWeb();
  let stack: Stack | undefined;
  let browser: TestBrowser | undefined;
  try {
    stack = await startStack({
      ...options,
      gatewayArgs: [...(options.gatewayArgs ?? []), '--web-dir', web.dir],
    });
    browser = await launchBrowser();
  } catch (err) {
    await stack?.close();
    await web.remove();
    throw err;
  }
  const s = stack;
  const b = browser;
  const origin = s.gatewayUrl;
  return {
    stack: s,
    browser: b,
    origin,
    async open(token, contextOptions = DESKTOP, extra = {}) {
      const context = await b.context(contextOptions);
      const page = await context.newPage();
      const problems = watch(page, origin, extra.acceptDialogs ? { acceptDialogs: true } : {});
      await extra.before?.(page);
      await signIn(page, origin, token);
      return { page, problems };
    },
    async close() {
      await b.close();
      await s.close();
      await web.remove();
    },
  };
}
