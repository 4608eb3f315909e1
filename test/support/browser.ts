import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { requireOrSkip } from '@app/testing';

/** The system's Chromium (Debian's by default): tests never download a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether browser suites can run; under CI a missing Chromium fails the suite instead of skipping it. */
export function chromiumAvailable(): boolean {
  return requireOrSkip(existsSync(CHROMIUM_PATH), `Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH)`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}

/** Where tests leave files for people to look at (screenshots): TEST_ARTIFACTS_DIR, default test/artifacts. */
export function artifactPath(file: string): string {
  const dir = path.resolve(process.env.TEST_ARTIFACTS_DIR ?? 'test/artifacts');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, file);
}

/** Signs in on the report builder's page and waits until the page says so. */
export async function signIn(
  page: Page,
  user: { readonly id: string; readonly token: string },
): Promise<void> {
  await page.fill('#user-id', user.id);
  await page.fill('#token', user.token);
  await page.click('#sign-in');
  await page.waitForSelector('body[data-state="signed-in"]', { timeout: 20_000 });
}

/**
 * A screenshot of the whole page with the viewport as tall as the page, so that the sticky
 * "Run report" bar sits at the bottom of the form as a person scrolled there would see it.
 */
export async function fullScreenshot(page: Page, file: string): Promise<void> {
  const viewport = page.viewportSize()!;
  const height = await page.evaluate(
    () => (globalThis as any).document.documentElement.scrollHeight as number,
  );
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  await page.screenshot({ path: artifactPath(file) });
  await page.setViewportSize(viewport);
}
