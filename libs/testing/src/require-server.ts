/**
 * Whether a suite that needs an external program can run. Under CI a missing program is a
 * failure, never a skip; elsewhere the suite is skipped with the reason printed.
 */
export function requireOrSkip(available: boolean, what: string): boolean {
  if (available) {
    return true;
  }
  if (process.env.CI === 'true') {
    throw new Error(`${what} is required under CI but is not available`);
  }
  console.warn(`SKIPPED: ${what} is not available`);
  return false;
}
