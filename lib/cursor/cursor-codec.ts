// Page cursors (issue #44): the sort keys' values of one row, sealed so that a caller can hand
// them back but neither read nor alter them, nor use them for another request.
//
// A cursor is base64url of: version (1 byte) | salt (16 random bytes) | AES-256-GCM ciphertext |
// GCM tag (16 bytes). The message key is HKDF-SHA256(secret, salt, "querylib cursor v1"): a key
// per cursor, so GCM's nonce (fixed zero, as each key seals one message) can never repeat however
// many cursors one secret seals (a random 96-bit IV under one key is limited to 2^32 messages,
// which a busy service would pass within weeks). The plaintext is JSON: the digest of the binding
// (entity, source, request shape, caller scope, policy snapshot: what the cursor is valid for)
// and the values. Everything in it is encrypted, so a cursor shows no value, not even one the
// caller may see; the binding digest inside tells a foreign cursor (CursorMismatch) from a forged
// or damaged one (InvalidCursor), which GCM refuses before anything is read.
//
// node:crypto only: AES-GCM, HKDF and the salt's randomness are the platform's; the framing is
// the few lines below, since no library seals "values bound to a context" in this form.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { Codes, fail } from "../errors/codes.js";

const version = 1;
const saltLength = 16;
const tagLength = 16;
const zeroIv = Buffer.alloc(12);
const info = Buffer.from("querylib cursor v1");
const padding = 128;

/** A secret that seals cursors: 32 bytes or more (a string counts its UTF-8 bytes). */
export type CursorSecret = string | Uint8Array;

/** What a cursor may carry: the values of one row's sort keys as the database or the array gave them. */
export type CursorValue = string | number | boolean | null | Date | Uint8Array | bigint;

export const minimumSecretBytes = 32;

export function secretBytes(secret: CursorSecret): Buffer {
  return typeof secret === "string" ? Buffer.from(secret, "utf8") : Buffer.from(secret);
}

/**
 * The secrets cursors are sealed and opened with: the first seals, every one opens (rotation:
 * put the new secret first and keep the old one until its cursors have aged out).
 */
export class CursorKeyring {
  private readonly secrets: readonly Buffer[];

  constructor(secrets: readonly CursorSecret[]) {
    if (secrets.length === 0) throw new Error("QueryLib: a cursor keyring needs at least one secret");
    this.secrets = secrets.map((s) => {
      const bytes = secretBytes(s);
      if (bytes.length < minimumSecretBytes) throw new Error(`QueryLib: a cursor secret needs at least ${minimumSecretBytes} bytes`);
      return bytes;
    });
  }

  /** A keyring with one secret of 32 random bytes: cursors valid in this process only. */
  static random(): CursorKeyring {
    return new CursorKeyring([randomBytes(32)]);
  }

  seal(binding: string, values: readonly CursorValue[]): string {
    const salt = randomBytes(saltLength);
    const header = Buffer.from([version]);
    const cipher = createCipheriv("aes-256-gcm", messageKey(this.secrets[0]!, salt), zeroIv, { authTagLength: tagLength });
    cipher.setAAD(Buffer.concat([header, salt]));
    const json = Buffer.from(JSON.stringify({ b: bindingDigest(binding), v: values.map(encodeValue) }), "utf8");
    // Padded with spaces (JSON reads past trailing whitespace) to a multiple of 128 bytes: GCM keeps
    // the length, and an unpadded cursor's length would tell the length of the sort keys' values
    // (a field the caller may order by but not select, the primary key's digits).
    const plain = Buffer.concat([json, Buffer.alloc((padding - (json.length % padding)) % padding, 0x20)]);
    const sealed = Buffer.concat([header, salt, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return sealed.toString("base64url");
  }

  /** The values of a cursor this keyring sealed for `binding`; InvalidCursor or CursorMismatch otherwise (at `path`). */
  open(cursor: string, binding: string, path: string): CursorValue[] {
    const invalid = (): never => fail(Codes.InvalidCursor, "the cursor was not made by this service, or was altered", path);
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) invalid();
    const bytes = Buffer.from(cursor, "base64url");
    if (bytes.length < 1 + saltLength + tagLength + 1 || bytes[0] !== version) invalid();
    const salt = bytes.subarray(1, 1 + saltLength);
    const body = bytes.subarray(1 + saltLength, bytes.length - tagLength);
    const tag = bytes.subarray(bytes.length - tagLength);
    let plain: Buffer | null = null;
    for (const secret of this.secrets) {
      try {
        const decipher = createDecipheriv("aes-256-gcm", messageKey(secret, salt), zeroIv, { authTagLength: tagLength });
        decipher.setAAD(bytes.subarray(0, 1 + saltLength));
        decipher.setAuthTag(tag);
        plain = Buffer.concat([decipher.update(body), decipher.final()]);
        break;
      } catch {
        // Not sealed with this secret (or altered): try the next one.
      }
    }
    if (plain === null) return invalid();
    let payload: unknown;
    try {
      payload = JSON.parse(plain.toString("utf8"));
    } catch {
      return invalid();
    }
    const { b, v } = (payload ?? {}) as { b?: unknown; v?: unknown };
    if (typeof b !== "string" || !Array.isArray(v)) return invalid();
    if (b !== bindingDigest(binding)) {
      fail(Codes.CursorMismatch, "the cursor belongs to another request (entity, conditions, orders, caller or policy version): start again from the first page", path);
    }
    return v.map((item) => {
      const value = decodeValue(item);
      return value === undefined ? invalid() : value;
    });
  }
}

function messageKey(secret: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, salt, info, 32));
}

const bindingDigest = (binding: string) => createHash("sha256").update(binding, "utf8").digest("base64url");

type Encoded = readonly [string] | readonly [string, string | number | boolean];

/** A value as a tagged JSON pair, so that it comes back as the same type (a date as a date, a big integer as one). */
function encodeValue(value: CursorValue): Encoded {
  if (value === null || value === undefined) return ["z"];
  if (typeof value === "string") return ["s", value];
  if (typeof value === "number") return Number.isFinite(value) ? ["n", value] : ["f", String(value)];
  if (typeof value === "boolean") return ["b", value];
  if (typeof value === "bigint") return ["i", value.toString()];
  if (value instanceof Date) return ["d", value.getTime()];
  if (value instanceof Uint8Array) return ["x", Buffer.from(value).toString("base64")];
  // A driver's own type (a JSON column): its JSON text, read back as text.
  return ["s", JSON.stringify(value)];
}

/** undefined: not a value this module wrote. */
function decodeValue(item: unknown): CursorValue | undefined {
  if (!Array.isArray(item) || typeof item[0] !== "string") return undefined;
  const [tag, value] = item as [string, unknown];
  switch (tag) {
    case "z": return item.length === 1 ? null : undefined;
    case "s": return typeof value === "string" ? value : undefined;
    case "n": return typeof value === "number" ? value : undefined;
    case "f": return value === "NaN" || value === "Infinity" || value === "-Infinity" ? Number(value) : undefined;
    case "b": return typeof value === "boolean" ? value : undefined;
    case "i": return typeof value === "string" && /^-?\d+$/.test(value) ? BigInt(value) : undefined;
    case "d": return typeof value === "number" && Number.isFinite(value) ? new Date(value) : undefined;
    case "x": return typeof value === "string" ? Buffer.from(value, "base64") : undefined;
    default: return undefined;
  }
}
