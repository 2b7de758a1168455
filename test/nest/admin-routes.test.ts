// Each admin route is declared once, in the route table (nest-module/admin/handlers.ts,
// adminRoutes): the controller's methods are made from it, as mapQpPolicyAdmin's adapter routes
// are, so the two agree on every method, path and level by construction.
import "reflect-metadata";
import { expect } from "chai";
import { METHOD_METADATA, PATH_METADATA } from "@nestjs/common/constants.js";
import { RequestMethod } from "@nestjs/common";
import { adminRoutes, createAdminController } from "../../nest-module/index.js";

describe("Admin routes: one table, one controller made from it", () => {
  const controller = createAdminController("qp-admin");
  const prototype = controller.prototype as Record<string, Function>;

  it("the controller has one method per row of adminRoutes, with its HTTP method, path and level", () => {
    const methods = Object.getOwnPropertyNames(prototype).filter((name) => name !== "constructor");
    expect(methods).to.have.members(adminRoutes.map((r) => r.name));
    for (const route of adminRoutes) {
      const handler = prototype[route.name]!;
      expect(Reflect.getMetadata(PATH_METADATA, handler), route.name).to.equal(route.path);
      expect(Reflect.getMetadata(METHOD_METADATA, handler), route.name).to.equal(RequestMethod[route.method]);
      expect(Reflect.getMetadata("querylib:admin-level", handler), route.name).to.equal(route.level);
    }
  });

  it("the controller sits under the prefix it was made for", () => {
    expect(Reflect.getMetadata(PATH_METADATA, controller)).to.equal("qp-admin");
  });
});
