// Token vaults map each distinct (scope, value) to a random 32-hex token, the same token every
// time. Values are looked up by a keyed digest, never stored in clear as a key. One call per
// page and scope carries every distinct value (one round trip for remote vaults).
import { randomBytes } from "node:crypto";
import { HmacSha256 } from "./hmac-sha256.js";

export interface IQpTokenVault {
  /** Tokens for the distinct values of one scope; creates the missing ones atomically. */
  tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** What comes before the value in what a vault's digest is computed over: the scope and a NUL. */
const digestPrefix = (scope: string) => `${scope}\u0000`;

/** The digest under which a value is stored: HMAC-SHA256 with the vault's own key, hex. */
export function vaultDigest(key: HmacSha256, scope: string, value: string): string {
  return key.hex(digestPrefix(scope) + value);
}

export const newToken = () => randomBytes(16).toString("hex");

/** The core package's vault: process memory, atomic by construction (no await between read and write). */
export class QpInMemoryTokenVault implements IQpTokenVault {
  private readonly scopes = new Map<string, Map<string, string>>();
  private readonly key: HmacSha256;
  /** How many tokenize calls were made (one per page and scope). */
  calls = 0;

  constructor(options: { digestKey?: string } = {}) {
    this.key = new HmacSha256(options.digestKey ? Buffer.from(options.digestKey, "utf8") : randomBytes(32));
  }

  async tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>> {
    this.calls++;
    let tokens = this.scopes.get(scope);
    if (!tokens) this.scopes.set(scope, (tokens = new Map()));
    const result = new Map<string, string>();
    const prefix = digestPrefix(scope);
    for (const value of values) {
      if (result.has(value)) continue;
      // A keyed digest of the same input as the stores', one compression for a short value: this
      // map never leaves the process, so HMAC's outer hash would buy nothing (see innerCompact).
      const digest = this.key.innerCompact(value, prefix);
      let token = tokens.get(digest);
      if (!token) tokens.set(digest, (token = newToken()));
      result.set(value, token);
    }
    return result;
  }

  /** Stored entries per scope (digests and tokens only), for inspection. */
  size(scope: string): number {
    return this.scopes.get(scope)?.size ?? 0;
  }
}
