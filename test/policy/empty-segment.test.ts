// A Segment without condition sets (the member missing, or an empty list) under a policy: it
// must still be scoped by QpForceWhere and meet QpRequireWhere, like a Filter without a
// conditionGroup. Found by the sample app's HTTP fuzz (test/nest/http-fuzz.test.ts): such a
// Segment returned every tenant's rows, and Bed rows without the required wardId condition.
// (The HTTP tests cover the member missing: /api/{entity}/segment reads it as an empty list.)
import assert from "node:assert/strict";
import { PolicyErrorCode, QpPolicyContext } from "../../lib/index.js";
import { Patient } from "./domain.js";
import { Bed } from "./more-domain.js";
import { type Guarded, assertTenant, convenience, expectPolicyError, idsOf, strict, t1, tenantContext } from "./helpers.js";
import { forEachPolicyTarget } from "./policy-targets.js";

forEachPolicyTarget("Policy: a Segment without condition sets", (ctx) => {
  let contexts: QpPolicyContext[];
  before(async () => {
    contexts = [await tenantContext(convenience), await tenantContext(strict)];
  });

  it("is scoped by the forced tenant predicate: the caller's rows only, totals included", async () => {
    for (const context of contexts) {
      const result = (await ctx.guard(Patient as never, context).toListAsync({ conditionSets: [], selects: ["id", "tenantId"], page: { pageNumber: 1, pageSize: 100 } } as never)) as unknown as Guarded;
      assert.deepEqual((result.data as { id: number }[]).map((r) => r.id).sort((a, b) => a - b), idsOf(t1));
      assert.equal(result.totalCount, t1.length);
      assertTenant(result.data);
    }
  });

  it("meets QpRequireWhere: without the required condition it is refused (11)", async () => {
    for (const context of contexts) {
      await expectPolicyError(() => ctx.guard(Bed as never, context).toListAsync({ conditionSets: [], selects: ["id"] } as never), PolicyErrorCode.RequiredFilterMissing);
    }
  });
});
