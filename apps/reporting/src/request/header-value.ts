/** Lone UTF-16 surrogates: they have no UTF-8 form, and `encodeURIComponent` throws on them. */
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * Text made safe for an HTTP header value: percent-encoded UTF-8 as `encodeURIComponent` does it
 * (RFC 3986), a lone surrogate first replaced by U+FFFD. The result is visible ASCII whatever the
 * input (CR, LF, NUL, emoji) and holds no comma; `decodeURIComponent` reverses it.
 */
export function percentEncode(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'));
}

/** `X-Report-Removed`: the removed column names, each percent-encoded, separated by commas. */
export function removedColumnsHeader(names: readonly string[]): string {
  return names.map(percentEncode).join(',');
}
