import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
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
