/** The instrumentation scope's version of QueryLib's tracer and meter: package.json's (test/telemetry/spans.test.ts checks they agree). */
export const libraryVersion = "3.0.0";
