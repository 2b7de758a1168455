// The sample app's two keys: the Hash strategy's HMAC key (QUERYLIB_HASH_SALT) and the relational
// token vault's digest key (QUERYLIB_VAULT_KEY). A published default would let anyone who reads
// this repository reverse every hashed staff name offline from one response (hash the common
// names with it, #42), so there is none: outside dev mode the app refuses to start without both;
// in dev mode each one not set is drawn at random (node:crypto) at every start, which makes
// hashes and vault tokens differ from one start to the next (and between replicas: set both for
// replicas that must agree). A value shorter than 16 characters, or one of the demo values this
// file used to publish, is refused in both modes.
import { randomBytes } from "node:crypto";

export interface SampleSecrets {
  readonly hashSalt: string;
  readonly vaultKey: string;
  /** The variables drawn at random for this start (dev mode only): the start-up log names them. */
  readonly drawn: readonly string[];
}

/** Thrown (and printed by `main.ts`) when the app must not start. */
export class SampleSecretsError extends Error {}

/** The demo values earlier versions published: known to anyone, so refused like a missing key. */
const published = new Set(["querylib-sample-app-demo-salt", "querylib-sample-app-demo-vault-key"]);
const minimumLength = 16;

const variables = [["hashSalt", "QUERYLIB_HASH_SALT"], ["vaultKey", "QUERYLIB_VAULT_KEY"]] as const;

/** The environment variables of the two keys. */
export const sampleKeyVariables: readonly string[] = variables.map(([, variable]) => variable);

/** 32 random bytes as base64url: 43 characters. */
const draw = () => randomBytes(32).toString("base64url");

export function resolveSampleSecrets(devMode: boolean, env: NodeJS.ProcessEnv = process.env): SampleSecrets {
  const values: Record<string, string> = {};
  const drawn: string[] = [];
  const missing: string[] = [];
  for (const [key, variable] of variables) {
    const value = env[variable]?.trim();
    if (value) {
      if (value.length < minimumLength) throw new SampleSecretsError(`${variable} is shorter than ${minimumLength} characters`);
      if (published.has(value)) throw new SampleSecretsError(`${variable} is the demo value an earlier sample app published: anyone can reverse hashes made with it; set a secret of your own`);
      values[key] = value;
    } else if (devMode) {
      values[key] = draw();
      drawn.push(variable);
    } else missing.push(variable);
  }
  if (missing.length > 0) {
    throw new SampleSecretsError(`${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set: outside dev mode the sample app needs its own Hash key (QUERYLIB_HASH_SALT) and vault key (QUERYLIB_VAULT_KEY), `
      + `at least ${minimumLength} characters each (e.g. node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"); in dev mode they are drawn at random per start`);
  }
  return { hashSalt: values.hashSalt!, vaultKey: values.vaultKey!, drawn };
}
