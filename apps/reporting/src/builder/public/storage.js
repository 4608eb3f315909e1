// @ts-check
/**
 * What the page keeps in this browser's local storage: the last user id, and per user the last
 * seed and when the last request left (shared by the tabs, so seeds grow across them). Never the
 * token.
 */

const STORAGE_PREFIX = 'adx-report-builder:';

/**
 * @param {string} key
 * @returns {string | null}
 */
export function storageGet(key) {
  try {
    return window.localStorage.getItem(STORAGE_PREFIX + key);
  } catch {
    return null;
  }
}

/**
 * @param {string} key
 * @param {string} value
 */
export function storageSet(key, value) {
  try {
    window.localStorage.setItem(STORAGE_PREFIX + key, value);
  } catch {
    /* storage unavailable: seeds then only grow within this page */
  }
}
