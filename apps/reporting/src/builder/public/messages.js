// @ts-check
/* Messages of the page: a result code as a sentence, with what to do about it. */
import { codeEntry, fillWait } from './catalogue.js';
import { el } from './dom.js';

/** @typedef {string | { detail: true; text: string } | null | undefined | false} Line */

/** @param {HTMLElement} target */
export function hideMessage(target) {
  target.hidden = true;
  target.replaceChildren();
  delete target.dataset.code;
}

/**
 * @param {HTMLElement} target
 * @param {'error' | 'warn' | 'info'} kind
 * @param {string} title
 * @param {readonly Line[]} lines advice as plain strings, details as `{ detail: true, text }`
 * @param {number} [code]
 */
export function showMessage(target, kind, title, lines, code) {
  target.className = `message message-${kind}`;
  target.replaceChildren(
    el('p', { className: 'message-title' }, [
      title,
      code !== undefined ? el('span', { className: 'message-code' }, [`Code ${code}`]) : null,
    ]),
    ...lines
      .filter((line) => Boolean(line))
      .map((line) =>
        typeof line === 'object' && line
          ? el('p', { className: 'message-detail' }, [line.text])
          : el('p', { className: 'message-advice' }, [String(line)]),
      ),
  );
  if (code !== undefined) {
    target.dataset.code = String(code);
  } else {
    delete target.dataset.code;
  }
  target.hidden = false;
}

/**
 * A result code as a sentence and what to do: the catalogue's message, then the advice.
 *
 * @param {HTMLElement} target
 * @param {import('./api.js').ApiError} error
 */
export function showError(target, error) {
  const entry = codeEntry(error.code);
  const title = entry ? entry.message : `Unexpected answer (HTTP ${error.status})`;
  const advice = entry
    ? fillWait(entry.advice, error.retryAfter)
    : 'The service answered in a way this page does not know. Try again; if it keeps happening, contact support.';
  /** @type {Line[]} */
  const lines = [advice];
  if (error.detail && error.detail !== title) {
    lines.push({ detail: true, text: `The service said: ${error.detail}` });
  }
  if (error.requestId) {
    lines.push({ detail: true, text: `Request id: ${error.requestId}` });
  }
  showMessage(target, 'error', title, lines, error.code || undefined);
}

/** @param {HTMLElement} target */
export function showNetworkError(target) {
  showMessage(target, 'error', 'The reporting service could not be reached', [
    'Check your connection, then try again.',
  ]);
}
