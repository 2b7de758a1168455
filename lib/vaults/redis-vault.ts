// querylib/redis-vault: tokens in Redis (ioredis). Each (scope, value) lives under
// `${keyPrefix}${scope}:${digest}` where digest is HMAC-SHA256(digestKey, scope, value): a value
// is never a key in clear. Get-or-create is one atomic `SET key token NX GET` per value (Redis
// 7+), all values of a page in one pipeline: one round trip per page and scope. Keys carry no
// TTL; durability is the Redis server's own persistence setting.
import type { IQpTokenVault } from "../transform/vault.js";
import { newToken, vaultDigest } from "../transform/vault.js";
import { HmacSha256 } from "../transform/hmac-sha256.js";
import { checkDigestKey } from "./digest-key.js";

/** The part of an ioredis client the vault uses. */
export interface RedisLike {
  // ioredis's overloads of set are many; the vault only calls set(key, token, "NX", "GET").
  pipeline(): { set(...args: any[]): unknown; exec(): Promise<[Error | null, unknown][] | null> };
}

export interface QpRedisTokenVaultOptions {
  /** A secret of at least 16 characters, the same in every process sharing the vault. */
  digestKey: string;
  /** Namespace of the vault's keys; default "querylib:token:". */
  keyPrefix?: string;
}

export class QpRedisTokenVault implements IQpTokenVault {
  private readonly digestKey: HmacSha256;
  private readonly keyPrefix: string;
  /** Round trips made (one per page and scope). */
  roundTrips = 0;

  constructor(private readonly client: RedisLike, options: QpRedisTokenVaultOptions) {
    this.digestKey = new HmacSha256(checkDigestKey("QpRedisTokenVault", options));
    this.keyPrefix = options.keyPrefix ?? "querylib:token:";
  }

  keyOf(scope: string, value: string): string {
    return `${this.keyPrefix}${scope}:${vaultDigest(this.digestKey, scope, value)}`;
  }

  async tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const distinct = [...new Set(values)];
    if (distinct.length === 0) return new Map();
    const pipeline = this.client.pipeline();
    const candidates = distinct.map((value) => {
      const token = newToken();
      pipeline.set(this.keyOf(scope, value), token, "NX", "GET");
      return token;
    });
    this.roundTrips++;
    const replies = await pipeline.exec();
    if (!replies || replies.length !== distinct.length) throw new Error("Redis returned no reply for the token pipeline");
    const tokens = new Map<string, string>();
    replies.forEach(([error, existing], i) => {
      if (error) throw error;
      // NX GET answers the previous value, or null when this call created the key.
      tokens.set(distinct[i]!, typeof existing === "string" ? existing : candidates[i]!);
    });
    return tokens;
  }
}
