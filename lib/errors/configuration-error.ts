// Configuration errors: a startup failure (QpConfigurationError), and the one whose code is a
// policy code (QpPolicyConfigurationError, a PolicyException too).
import { PolicyErrorCode, PolicyException } from "./policy-exception.js";

/** A startup failure (or one at the first guarded use of an unexposed entity): the message says what to fix, `code` which rule. */
export class QpConfigurationError extends Error {
  constructor(message: string, readonly code = "InvalidConfiguration") {
    super(message);
    this.name = "QpConfigurationError";
  }

  /** A QpPolicyConfigurationError (a PolicyException) is a QpConfigurationError too. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, value) || (this === QpConfigurationError && value instanceof QpPolicyConfigurationError);
  }
}

/**
 * A configuration failure whose code is a policy code (MissingHashSalt 21, MissingTokenVault 22,
 * AmbiguousFieldName 13): raised at startup as before, but a PolicyException with its numeric
 * `errorCode`, so a handler that catches PolicyException by errorCode meets it; `instanceof
 * QpConfigurationError` holds too. Its message is the configuration message, without the
 * "Name (n): " prefix of a query's PolicyException.
 */
export class QpPolicyConfigurationError extends PolicyException {
  constructor(errorCode: PolicyErrorCode, message: string) {
    super(errorCode, message);
    this.message = message;
    this.name = "QpConfigurationError";
  }
}

/** The PolicyErrorCode named `code`, if it names one. */
export function policyCodeOf(code: string): PolicyErrorCode | undefined {
  const value = (PolicyErrorCode as unknown as Record<string, unknown>)[code];
  return typeof value === "number" ? (value as PolicyErrorCode) : undefined;
}

/** A configuration error with this code: a QpPolicyConfigurationError when the code is a policy code, else a QpConfigurationError. */
export function configurationError(message: string, code: string): QpConfigurationError {
  const errorCode = policyCodeOf(code);
  return (errorCode === undefined ? new QpConfigurationError(message, code) : new QpPolicyConfigurationError(errorCode, message)) as QpConfigurationError;
}

/** The same configuration error (class, code and what it carries) with another message. */
export function reworded(error: QpConfigurationError, message: string): QpConfigurationError {
  return Object.assign(configurationError(message, error.code), { ...error });
}
