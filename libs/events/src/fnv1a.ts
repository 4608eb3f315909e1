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
