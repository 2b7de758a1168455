// Shared vaults need one digest key across every process that uses them: a token is looked up by
// HMAC(digestKey, scope, value), so the vault stores digests, never values, and two replicas find
// the same token only if they share the key. Without it the vault could not be shared safely.
import { QpConfigurationError } from "../errors/configuration-error.js";

export function checkDigestKey(vault: string, options: { digestKey?: unknown } | undefined): string {
  const key = options?.digestKey;
  if (typeof key !== "string" || key.length < 16) {
    const got = typeof key === "string" ? `a digestKey of ${key.length} characters` : "no digestKey";
    throw new QpConfigurationError(
      `${vault} got ${got}: pass { digestKey } with a secret of at least 16 characters, the same in every process sharing the vault `
      + `(tokens are stored under HMAC(digestKey, scope, value), never the value; e.g. new ${vault}(…, { digestKey: process.env.QUERYLIB_VAULT_KEY }))`,
      "MissingDigestKey",
    );
  }
  return key;
}
