/**
 * 32-bit FNV-1a of a string's UTF-16 code units: a cheap, stable spread, the same in every process
 * and store (partitions of the in-process bus, the inexact sample, creative rotation).
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * `fnv1a32` of ASCII text from its bytes `bytes[start, end)`: each byte is then one UTF-16 code
 * unit, so the hash equals `fnv1a32` of the string (the ingest hashes event ids it never decodes).
 */
export function fnv1a32Ascii(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) {
    hash ^= bytes[i];
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
