// HmacSha256 (lib/transform/hmac-sha256.ts) computes the Hash strategy and every vault's digest
// without node:crypto's per-call cost. Its outputs must be node:crypto's, byte for byte, or
// stored hashes and vault entries would change: RFC 4231's vectors, then node:crypto on every
// text length across the block and inline boundaries, every UTF-8 width, lone surrogates and
// keys shorter than, equal to and longer than a block.
import { expect } from "chai";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { HmacSha256, maxInlineLength } from "../../lib/transform/hmac-sha256.js";
import { hmac } from "../../lib/transform/strategies.js";
import { vaultDigest } from "../../lib/transform/vault.js";

const nodeHmac = (key: string | Uint8Array, text: string) => createHmac("sha256", key).update(text, "utf8").digest("hex");

/** A deterministic generator, so a failure names a reproducible input. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Text of `units` UTF-16 units drawn from ASCII, 2-byte, 3-byte, 4-byte (pairs) and lone surrogates. */
function textOf(units: number, next: () => number): string {
  const pool = ["a", "Z", "0", "\u0000", "é", "ß", "\u07ff", "€", "漢", "\uffff", "😀", "\u{10ffff}", "\ud800", "\udfff"];
  let text = "";
  while (text.length < units) text += pool[Math.floor(next() * pool.length)]!;
  return text.slice(0, units); // may cut a pair in half: a lone high surrogate at the end
}

describe("HmacSha256: node:crypto's HMAC-SHA256, byte for byte", () => {
  it("gives RFC 4231's results (test cases 1, 2, 6 and 7: text data, short, and longer-than-block keys)", () => {
    const aa131 = new Uint8Array(131).fill(0xaa);
    const vectors: [Uint8Array, string, string][] = [
      [new Uint8Array(20).fill(0x0b), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"],
      [new TextEncoder().encode("Jefe"), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"],
      [aa131, "Test Using Larger Than Block-Size Key - Hash Key First", "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"],
      [aa131, "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"],
    ];
    for (const [key, data, expected] of vectors) {
      expect(new HmacSha256(key).hex(data), data).to.equal(expected);
      expect(nodeHmac(key, data), data).to.equal(expected);
    }
  });

  it("equals node:crypto for every text length from 0 to past the inline limit, in every UTF-8 width", () => {
    const next = random(4231);
    const keys: (string | Uint8Array)[] = ["", "k", "querylib-bench-hash-salt-0001", "x".repeat(64), "y".repeat(65), "sälz-€-😀".repeat(12), randomBytes(32), randomBytes(100)];
    let compared = 0;
    for (const key of keys) {
      const hmacKey = new HmacSha256(key);
      for (let units = 0; units <= maxInlineLength + 8; units++) {
        const ascii = "v".repeat(units);
        const mixed = textOf(units, next);
        for (const text of [ascii, mixed]) {
          expect(hmacKey.hex(text), `${JSON.stringify(text)} under ${String(key)}`).to.equal(nodeHmac(key, text));
          compared++;
        }
      }
    }
    expect(compared).to.equal(keys.length * (maxInlineLength + 9) * 2);
  });

  it("pads exactly at the block boundaries (55, 56, 63, 64, 119, 120 bytes of text)", () => {
    const key = new HmacSha256("boundary-key");
    for (const bytes of [54, 55, 56, 57, 63, 64, 65, 118, 119, 120, 121, 127, 128]) {
      for (const text of ["a".repeat(bytes), "é".repeat(bytes >> 1) + "a".repeat(bytes & 1), "€".repeat(Math.floor(bytes / 3)) + "a".repeat(bytes % 3)]) {
        expect(Buffer.byteLength(text), text).to.equal(bytes);
        expect(key.hex(text), text).to.equal(nodeHmac("boundary-key", text));
      }
    }
  });

  it("encodes lone surrogates as U+FFFD, as node:crypto does", () => {
    const key = new HmacSha256("surrogates");
    for (const text of ["\ud800", "\udc00", "a\ud800", "\udfffa", "\ud800\ud800", "\udc00\ud800", "😀".slice(0, 1), "😀".slice(1)]) {
      expect(key.hex(text), JSON.stringify(text)).to.equal(nodeHmac("surrogates", text));
      expect(key.hex(text)).to.equal(key.hex(text.replace(/[\ud800-\udfff]/g, "\ufffd")));
    }
  });

  it("keeps its keys apart when used in turn (the scratch buffers are shared)", () => {
    const one = new HmacSha256("first-key-0000000");
    const two = new HmacSha256("second-key-000000");
    for (const text of ["a", "b".repeat(200), "c".repeat(600)]) {
      const first = one.hex(text);
      expect(two.hex(text)).to.equal(nodeHmac("second-key-000000", text));
      expect(one.hex(text)).to.equal(first).and.to.equal(nodeHmac("first-key-0000000", text));
    }
  });

  it("cuts to whole words: Hash keeps the first 32 hex characters", () => {
    const text = "REF-1";
    expect(new HmacSha256("salt-salt-salt-1").hex(text, 4)).to.equal(nodeHmac("salt-salt-salt-1", text).slice(0, 32));
    expect(hmac("salt-salt-salt-1", text)).to.equal(nodeHmac("salt-salt-salt-1", text).slice(0, 32));
    expect(hmac("salt-salt-salt-1", "z".repeat(1000))).to.equal(nodeHmac("salt-salt-salt-1", "z".repeat(1000)).slice(0, 32));
  });

  it("gives HMAC's inner hash alone, SHA-256 of key XOR ipad and the text, as 16 units, inline and past the limit", () => {
    const next = random(16);
    const fromHex = (hex: string) => String.fromCharCode(...Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(i * 4, i * 4 + 4), 16)));
    for (const keyText of ["compact-key-000000", "k".repeat(64), "long-key-".repeat(9)]) {
      const key = new HmacSha256(keyText);
      const keyBytes = Buffer.byteLength(keyText) > 64 ? createHash("sha256").update(keyText).digest() : Buffer.from(keyText);
      const ipad = Buffer.alloc(64, 0x36).map((b, i) => b ^ (keyBytes[i] ?? 0));
      for (const units of [0, 1, 3, 4, 30, 55, 56, 63, 64, 120, maxInlineLength, maxInlineLength + 1, 600]) {
        for (const text of ["q".repeat(units), textOf(units, next)]) {
          const inner = key.innerCompact(text);
          expect(inner).to.have.length(16);
          expect(inner, `${units} units under ${keyText}`).to.equal(fromHex(createHash("sha256").update(ipad).update(text, "utf8").digest("hex")));
          // Not the HMAC: a digest that must never be published is told apart from one that may be.
          expect(inner).to.not.equal(fromHex(nodeHmac(keyText, text)));
        }
      }
    }
  });

  it("reads a prefix apart from the text as if the two were one text, on either side of every limit", () => {
    const next = random(23);
    const key = new HmacSha256("compact-key-000000");
    for (const prefix of ["", "s", "customer.street\u0000", "p".repeat(54), "p".repeat(55), "é\u0000", "\ud800", textOf(30, next)]) {
      for (const units of [0, 1, 3, 4, 20, 54, 55, 56, 64, maxInlineLength - 1, maxInlineLength, maxInlineLength + 1]) {
        for (const text of ["q".repeat(units), textOf(units, next), `\udc00${"q".repeat(units)}`]) {
          expect(key.innerCompact(text, prefix), `${JSON.stringify(prefix)} + ${units} units`).to.equal(key.innerCompact(prefix + text));
        }
      }
    }
  });

  it("gives vaults the digest they stored before: HMAC over scope, a NUL and the value, in three updates", () => {
    const next = random(7);
    const key = randomBytes(32);
    const digestKey = new HmacSha256(key);
    for (const [scope, value] of [["customer.street", "Main St 1"], ["s\ud800", "\udc00v"], ["", ""], ["scope", textOf(300, next)], [textOf(40, next), textOf(40, next)]] as const) {
      const before = createHmac("sha256", key).update(scope).update("\u0000").update(value, "utf8").digest("hex");
      expect(vaultDigest(digestKey, scope, value), `${JSON.stringify(scope)} ${JSON.stringify(value)}`).to.equal(before);
    }
  });
});
