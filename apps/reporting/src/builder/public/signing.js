// @ts-check
/*
 * Signing (reporting part 5, docs/specification-notes.md#reporting-part-5): a request carries
 * hash = SHA-1(token + seed) in hex. Only the hashing lives here; the token and the seeds are kept
 * by api.js.
 */

/**
 * @param {Uint8Array} bytes
 * @returns {string}
 */
function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * SHA-1 in plain JavaScript, for pages served without HTTPS (where WebCrypto is missing).
 *
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
function sha1Fallback(bytes) {
  const length = bytes.length;
  const padded = ((length + 9 + 63) >> 6) << 6;
  const buffer = new Uint8Array(padded);
  buffer.set(bytes);
  buffer[length] = 0x80;
  const view = new DataView(buffer.buffer);
  view.setUint32(padded - 4, (length * 8) >>> 0);
  view.setUint32(padded - 8, Math.floor((length * 8) / 0x100000000));
  let h0 = 0x67452301;
  let h1 = 0xefcdab89;
  let h2 = 0x98badcfe;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0;
  const w = new Uint32Array(80);
  for (let offset = 0; offset < padded; offset += 64) {
    for (let i = 0; i < 16; i++) {
      w[i] = view.getUint32(offset + i * 4);
    }
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
      w[i] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let i = 0; i < 80; i++) {
      let f;
      let k;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) >>> 0;
      e = d;
      d = c;
      c = ((b << 30) | (b >>> 2)) >>> 0;
      b = a;
      a = t;
    }
    h0 = (h0 + a) >>> 0;
    h1 = (h1 + b) >>> 0;
    h2 = (h2 + c) >>> 0;
    h3 = (h3 + d) >>> 0;
    h4 = (h4 + e) >>> 0;
  }
  const out = new Uint8Array(20);
  const outView = new DataView(out.buffer);
  [h0, h1, h2, h3, h4].forEach((h, i) => outView.setUint32(i * 4, h));
  return out;
}

/**
 * SHA-1 of the text's UTF-8 bytes, in hex: WebCrypto where the page has it, else the fallback.
 *
 * @param {string} text
 * @returns {Promise<string>}
 */
export async function sha1Hex(text) {
  const bytes = new TextEncoder().encode(text);
  if (window.crypto && window.crypto.subtle) {
    return hex(new Uint8Array(await window.crypto.subtle.digest('SHA-1', bytes)));
  }
  return hex(sha1Fallback(bytes));
}

/**
 * The fallback alone, whatever the page has: for tests and for people checking their own hashes.
 *
 * @param {string} text
 * @returns {string}
 */
export function sha1HexFallback(text) {
  return hex(sha1Fallback(new TextEncoder().encode(text)));
}
