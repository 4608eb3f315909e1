/**
 * Whether the environment is a CI run: any non-empty `CI` (GitHub and GitLab set `true`, others `1`
 * or a name), as the developers' guide reads it. `CI=` (empty) is a local run.
 */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.CI ?? '') !== '';
}

/**
 * Whether a suite that needs an external program can run. Under CI a missing program is a
 * failure, never a skip; elsewhere the suite is skipped with the reason printed.
 */
export function requireOrSkip(
  available: boolean,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (available) {
    return true;
  }
  if (isCi(env)) {
    throw new Error(`${what} is required under CI but is not available`);
  }
  console.warn(`SKIPPED: ${what} is not available`);
  return false;
}
