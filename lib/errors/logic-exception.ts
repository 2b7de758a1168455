// Every bad input surfaces as a LogicException with a stable string code (the 2.x spellings
// that clients switch on), never as a driver or parser error.

export class LogicException extends Error {
  /** The stable code (e.g. "InvalidFormat"); clients switch on it. */
  readonly code: string;
  /** Where in the request the problem is, e.g. "conditionGroup.conditions[1].values[0]". */
  readonly path: string | undefined;

  constructor(code: string, message?: string, path?: string) {
    super(message ?? code);
    this.name = "LogicException";
    this.code = code;
    this.path = path;
  }
}
