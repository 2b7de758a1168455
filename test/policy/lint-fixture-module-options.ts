// forRoot's options object, as an application would export it for its module and the linter (issue #41).
import type { QpPolicyOptions } from "../../lib/index.js";
import { LintFixture } from "./lint-fixture.js";

export const queryLibOptions = {
  policies: { Tier: "Strict", Caps: { MinGroupSize: 3 } },
  configure: (o: QpPolicyOptions) => { o.entities.expose(LintFixture, "fixtures"); },
  claims: { userClaim: "sub", valueClaims: { tenantId: "tenant" } },
};
