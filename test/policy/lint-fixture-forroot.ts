// The policy of lint-fixture.ts in the shapes a Nest application already has (issue #41): the
// `configure` function it gives QueryLibModule.forRoot, and forRoot's whole options object. The
// command-line linter takes either (lint-cli.test.ts).
import type { QpPolicyOptions } from "../../lib/index.js";
import { LintFixture } from "./lint-fixture.js";

/** What `QueryLibModule.forRoot({ configure })` is given. */
export function configure(o: QpPolicyOptions): void {
  o.entities.expose(LintFixture, "fixtures");
}
