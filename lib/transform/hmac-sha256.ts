// HMAC-SHA256 (RFC 2104 over FIPS 180-4) for the short values hashed and tokenized row by row.
// node:crypto spends 1.4-2.4 µs per value, nearly all of it per call (a new Hmac object, the key
// blocks compressed again); here a key's inner and outer states are computed once, so a value of
// up to 55 UTF-8 bytes costs two compressions (0.6-0.85 µs). It matters end to end: on node:crypto
// a guarded page of 50 rows with a Hash and a Tokenize mask took 0.70 ms instead of 0.60 ms
// (BENCHMARKS.md, "HMAC on node:crypto"). Values longer than `maxInlineLength` go to node:crypto,
// where the per-call cost no longer shows. Outputs are byte-identical to node:crypto's:
// test/transform/hmac-sha256.test.ts compares them on RFC 4231's vectors, every length across the
// block boundaries, lone surrogates and long keys.
import { createHash, createHmac } from "node:crypto";

// prettier-ignore
const K = Int32Array.of(
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
);
const initialState = Int32Array.of(0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19);

/** The message schedule of the block being compressed: words 0–15 are filled by the caller. */
const w = new Int32Array(64);

function loadBlock(bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++, offset += 4) w[i] = (bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!;
}

/** One SHA-256 compression of the block in `w[0..15]` into `state`. */
function compress(state: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!;
    const y = w[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = state[0]!, b = state[1]!, c = state[2]!, d = state[3]!, e = state[4]!, f = state[5]!, g = state[6]!, h = state[7]!;
  // Eight rounds per pass, each three lines: T1 = h + Σ1(e) + Ch(e,f,g) + K + W; d += T1;
  // h = T1 + Σ0(a) + Maj(a,b,c). Instead of shifting eight variables every round, the next round
  // reads them one role further on (h plays a, a plays b, …); after eight rounds every role is back.
  // Ch is g ^ (e & (f ^ g)) and Maj (a & b) ^ (c & (a ^ b)): FIPS 180-4's functions in fewer steps.
  // Measured ~7% faster per HMAC than the one-round loop.
  for (let i = 0; i < 64; i += 8) {
    h = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + (g ^ (e & (f ^ g))) + K[i + 0]! + w[i + 0]!) | 0;
    d = (d + h) | 0;
    h = (h + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (c & (a ^ b)))) | 0;
    g = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) + (f ^ (d & (e ^ f))) + K[i + 1]! + w[i + 1]!) | 0;
    c = (c + g) | 0;
    g = (g + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) + ((h & a) ^ (b & (h ^ a)))) | 0;
    f = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) + (e ^ (c & (d ^ e))) + K[i + 2]! + w[i + 2]!) | 0;
    b = (b + f) | 0;
    f = (f + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) + ((g & h) ^ (a & (g ^ h)))) | 0;
    e = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) + (d ^ (b & (c ^ d))) + K[i + 3]! + w[i + 3]!) | 0;
    a = (a + e) | 0;
    e = (e + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) + ((f & g) ^ (h & (f ^ g)))) | 0;
    d = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) + (c ^ (a & (b ^ c))) + K[i + 4]! + w[i + 4]!) | 0;
    h = (h + d) | 0;
    d = (d + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) + ((e & f) ^ (g & (e ^ f)))) | 0;
    c = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) + (b ^ (h & (a ^ b))) + K[i + 5]! + w[i + 5]!) | 0;
    g = (g + c) | 0;
    c = (c + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) + ((d & e) ^ (f & (d ^ e)))) | 0;
    b = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) + (a ^ (g & (h ^ a))) + K[i + 6]! + w[i + 6]!) | 0;
    f = (f + b) | 0;
    b = (b + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) + ((c & d) ^ (e & (c ^ d)))) | 0;
    a = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) + (h ^ (f & (g ^ h))) + K[i + 7]! + w[i + 7]!) | 0;
    e = (e + a) | 0;
    a = (a + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) + ((b & c) ^ (d & (b ^ c)))) | 0;
  }
  state[0] = (state[0]! + a) | 0; state[1] = (state[1]! + b) | 0; state[2] = (state[2]! + c) | 0; state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0; state[5] = (state[5]! + f) | 0; state[6] = (state[6]! + g) | 0; state[7] = (state[7]! + h) | 0;
}

/** Values up to this many UTF-16 code units are hashed here (at most 3 UTF-8 bytes each fit `message`). */
export const maxInlineLength = 256;
const message = new Uint8Array(Math.ceil((maxInlineLength * 3 + 9) / 64) * 64);
const encoder = new TextEncoder();
const state = new Int32Array(8);
const hexDigit = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** The hex digit of bits `shift`..`shift + 3` of `v`. */
const digitAt = (v: number, shift: number): number => hexDigit[(v >>> shift) & 15]!;

/**
 * `state[at..at + 3]` as 32 hex characters made by one fromCharCode: a flat string. Joining
 * smaller pieces makes a rope that JSON.stringify must flatten again: measured per value, 250 ns
 * for four 8-character words joined and flattened against 105 ns here, and a 50-row page with a
 * hashed column stringified 14 µs faster.
 */
function hex128(at: number): string {
  const a = state[at]!, b = state[at + 1]!, c = state[at + 2]!, d = state[at + 3]!;
  // prettier-ignore
  return String.fromCharCode(
    digitAt(a, 28), digitAt(a, 24), digitAt(a, 20), digitAt(a, 16), digitAt(a, 12), digitAt(a, 8), digitAt(a, 4), digitAt(a, 0),
    digitAt(b, 28), digitAt(b, 24), digitAt(b, 20), digitAt(b, 16), digitAt(b, 12), digitAt(b, 8), digitAt(b, 4), digitAt(b, 0),
    digitAt(c, 28), digitAt(c, 24), digitAt(c, 20), digitAt(c, 16), digitAt(c, 12), digitAt(c, 8), digitAt(c, 4), digitAt(c, 0),
    digitAt(d, 28), digitAt(d, 24), digitAt(d, 20), digitAt(d, 16), digitAt(d, 12), digitAt(d, 8), digitAt(d, 4), digitAt(d, 0),
  );
}

/** A digest from node:crypto into `state`. */
function readDigest(bytes: Buffer): void {
  for (let i = 0; i < 8; i++) state[i] = bytes.readInt32BE(i * 4);
}

/** `state` as 16 UTF-16 code units, each 16 bits of it, big-endian. */
function compactState(): string {
  const s = state;
  // prettier-ignore
  return String.fromCharCode(
    s[0]! >>> 16, s[0]! & 0xffff, s[1]! >>> 16, s[1]! & 0xffff, s[2]! >>> 16, s[2]! & 0xffff, s[3]! >>> 16, s[3]! & 0xffff,
    s[4]! >>> 16, s[4]! & 0xffff, s[5]! >>> 16, s[5]! & 0xffff, s[6]! >>> 16, s[6]! & 0xffff, s[7]! >>> 16, s[7]! & 0xffff,
  );
}

/** An HMAC-SHA256 key with its inner and outer states computed once. */
export class HmacSha256 {
  private readonly inner = new Int32Array(initialState);
  private readonly outer = new Int32Array(initialState);
  /** The key block XOR ipad: what `inner` is the compression of, for texts past the inline limit. */
  private readonly innerPad = new Uint8Array(64);

  constructor(private readonly key: string | Uint8Array) {
    let bytes = typeof key === "string" ? encoder.encode(key) : key;
    if (bytes.length > 64) bytes = createHash("sha256").update(bytes).digest();
    const outerPad = new Uint8Array(64);
    for (const [target, pad, xor] of [[this.inner, this.innerPad, 0x36], [this.outer, outerPad, 0x5c]] as const) {
      for (let i = 0; i < 64; i++) pad[i] = (bytes[i] ?? 0) ^ xor;
      loadBlock(pad, 0);
      compress(target);
    }
  }

  /** The digest of `text` (UTF-8, lone surrogates as U+FFFD like node:crypto), whole or its first half (`words` 4), in lowercase hex. */
  hex(text: string, words: 4 | 8 = 8): string {
    if (text.length > maxInlineLength) return createHmac("sha256", this.key).update(text, "utf8").digest("hex").slice(0, words * 8);
    this.digest(text);
    return words === 4 ? hex128(0) : hex128(0) + hex128(4);
  }

  /**
   * HMAC's inner hash alone, SHA-256(key ⊕ ipad ‖ prefix ‖ text), in the compact form: one
   * compression for a short value instead of two. A keyed digest for map keys that never leave the
   * process (the in-memory vault's); HMAC's outer hash guards a digest that is published against
   * length extension, and this one is never published, stored or sent. The prefix is read apart
   * from the text: joined, the two would make a string V8 copies whole before reading it.
   */
  innerCompact(text: string, prefix = ""): string {
    if (prefix.length + text.length > maxInlineLength) readDigest(createHash("sha256").update(this.innerPad).update(prefix + text, "utf8").digest());
    else if (!this.innerAscii(text, prefix)) this.innerUtf8(prefix + text);
    return compactState();
  }

  /** HMAC of a value of at most `maxInlineLength` units, left in `state`. */
  private digest(text: string): void {
    if (!this.innerAscii(text, "")) this.innerUtf8(text);
    // Outer: the inner digest, 0x80, zeros, bit length 768 (one key block + 32 bytes).
    for (let i = 0; i < 8; i++) w[i] = state[i]!;
    w[8] = 0x80000000;
    w.fill(0, 9, 15);
    w[15] = 768;
    state.set(this.outer);
    compress(state);
  }

  /**
   * The inner hash of an ASCII prefix and text of up to 55 characters together (most masked
   * values: ids, codes, names), written straight into one block's words: no encoder call, no byte
   * buffer. False for anything else, which `innerUtf8` takes.
   */
  private innerAscii(text: string, prefix: string): boolean {
    const length = prefix.length + text.length;
    if (length > 55) return false;
    const split = prefix.length;
    let word = 0;
    let i = 0;
    for (; i < length; i++) {
      const c = i < split ? prefix.charCodeAt(i) : text.charCodeAt(i - split);
      if (c > 0x7f) return false;
      word = (word << 8) | c;
      if ((i & 3) === 3) {
        w[i >>> 2] = word;
        word = 0;
      }
    }
    // 0x80 right after the text, zeros up to the last word: the bit length of key block + text.
    w[i >>> 2] = ((word << 8) | 0x80) << ((3 - (i & 3)) * 8);
    for (let k = (i >>> 2) + 1; k < 15; k++) w[k] = 0;
    w[15] = (64 + length) * 8;
    state.set(this.inner);
    compress(state);
    return true;
  }

  /** The inner hash of any text (UTF-8, lone surrogates as U+FFFD), one or more blocks. */
  private innerUtf8(text: string): void {
    const length = encoder.encodeInto(text, message).written;
    // Padding: 0x80, zeros, then the bit length of key block + text as a 64-bit big-endian number.
    const blocks = (length + 72) >>> 6;
    const end = blocks * 64;
    message[length] = 0x80;
    message.fill(0, length + 1, end - 4);
    const bits = (64 + length) * 8;
    message[end - 4] = bits >>> 24;
    message[end - 3] = bits >>> 16;
    message[end - 2] = bits >>> 8;
    message[end - 1] = bits;
    state.set(this.inner);
    for (let offset = 0; offset < end; offset += 64) {
      loadBlock(message, offset);
      compress(state);
    }
  }
}
