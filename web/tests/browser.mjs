// Launches Debian's chromium through playwright-core: headless, no sandbox (CI runs as root),
// software rendering, no network use of its own, a fresh profile. Never downloads a browser.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'cb-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CB_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 760 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
  });
  const close = async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); };
  return { context, close };
}
