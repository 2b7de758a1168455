// The admin API as a Nest controller under the mapping's route prefix (one class per module
// declaration, since a controller's path is fixed when its class is defined). Its methods are made
// from the route table (handlers.ts, adminRoutes), which mapQpPolicyAdmin reads too: each route is
// declared once, and a new route is a row there and a method of QpAdminHandlers.
import {
  Body, type CanActivate, Controller, Delete, type ExecutionContext, Get, Inject, Injectable, Param, Post, Query, Req, Res, SetMetadata, UseFilters, UseGuards,
} from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
import { QpExceptionFilter } from "../errors.js";
import { QP_RUNTIME } from "../tokens.js";
import type { QpAdminLevel, QpRuntime } from "../runtime.js";
import { type QpAdminRoute, QpAdminHandlers, adminRoutes, levelOf } from "./handlers.js";

const levelKey = "querylib:admin-level";
const routeKey = "querylib:admin-route";

/** Applies the read or write policy of the mapping to each admin route (levelOf: lint's follows the mapping's lintLevel). */
@Injectable()
export class QpAdminGuard implements CanActivate {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const level = Reflect.getMetadata(levelKey, context.getHandler()) as QpAdminLevel | undefined;
    const name = Reflect.getMetadata(routeKey, context.getHandler()) as QpAdminRoute["name"] | undefined;
    await this.runtime.authorize(level && name ? levelOf({ name, level }, this.runtime.admin) : "write", context.switchToHttp().getRequest(), context);
    return true;
  }
}

const methodDecorator = { GET: Get, POST: Post, DELETE: Delete } as const;

interface AdminControllerInstance {
  readonly handlers: QpAdminHandlers;
  readonly adapterHost: HttpAdapterHost;
}

/**
 * A route's method: it hands the request to the route's handler and answers with the handler's
 * status and body (the status set on the response, passed through, as each route decides its own:
 * 201 for a new rule, 204 for a deletion).
 */
function defineRoute(prototype: object, route: QpAdminRoute): void {
  const method = async function (this: AdminControllerInstance, request: object, body: unknown, query: Record<string, unknown>, params: Record<string, unknown>, response: object) {
    const reply = await this.handlers.run(route.name, request, { body, query: query ?? {}, params: params ?? {} });
    this.adapterHost.httpAdapter.status(response, reply.status);
    return reply.body;
  };
  Object.defineProperty(method, "name", { value: route.name });
  Object.defineProperty(prototype, route.name, { value: method, writable: true, configurable: true });
  const descriptor = Object.getOwnPropertyDescriptor(prototype, route.name)!;
  Req()(prototype, route.name, 0);
  Body()(prototype, route.name, 1);
  Query()(prototype, route.name, 2);
  Param()(prototype, route.name, 3);
  Res({ passthrough: true })(prototype, route.name, 4);
  methodDecorator[route.method](route.path)(prototype, route.name, descriptor);
  SetMetadata(levelKey, route.level)(prototype, route.name, descriptor);
  SetMetadata(routeKey, route.name)(prototype, route.name, descriptor);
}

export function createAdminController(routePrefix: string): new (...args: never[]) => unknown {
  @Controller(routePrefix)
  @UseGuards(QpAdminGuard)
  @UseFilters(QpExceptionFilter)
  class QpPolicyAdminController implements AdminControllerInstance {
    readonly handlers: QpAdminHandlers;

    constructor(@Inject(QP_RUNTIME) runtime: QpRuntime, readonly adapterHost: HttpAdapterHost) {
      this.handlers = new QpAdminHandlers(runtime);
    }
  }
  for (const route of adminRoutes) defineRoute(QpPolicyAdminController.prototype, route);
  return QpPolicyAdminController;
}
