// The admin API as a Nest controller under the mapping's route prefix (one class per module
// declaration, since a controller's path is fixed when its class is defined).
import {
  Body, type CanActivate, Controller, Delete, type ExecutionContext, Get, HttpCode, Inject, Injectable, Param, Post, Query, Req, Res, SetMetadata, UseFilters, UseGuards,
} from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
import { QpExceptionFilter } from "../errors.js";
import { QP_RUNTIME } from "../tokens.js";
import type { QpAdminLevel, QpRuntime } from "../runtime.js";
import { type QpAdminReply, QpAdminHandlers } from "./handlers.js";

const levelKey = "querylib:admin-level";
const AdminLevel = (level: QpAdminLevel) => SetMetadata(levelKey, level);

/** Applies the read or write policy of the mapping to each admin route. */
@Injectable()
export class QpAdminGuard implements CanActivate {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const level = Reflect.getMetadata(levelKey, context.getHandler()) as QpAdminLevel | undefined;
    await this.runtime.authorize(level ?? "write", context.switchToHttp().getRequest(), context);
    return true;
  }
}

export function createAdminController(routePrefix: string): new (...args: never[]) => unknown {
  @Controller(routePrefix)
  @UseGuards(QpAdminGuard)
  @UseFilters(QpExceptionFilter)
  class QpPolicyAdminController {
    private readonly handlers: QpAdminHandlers;

    constructor(@Inject(QP_RUNTIME) runtime: QpRuntime, private readonly adapterHost: HttpAdapterHost) {
      this.handlers = new QpAdminHandlers(runtime);
    }

    private send(response: object, reply: QpAdminReply): unknown {
      this.adapterHost.httpAdapter.status(response, reply.status);
      return reply.body;
    }

    @Post("schema") @HttpCode(200) @AdminLevel("read")
    async schema(@Req() request: object, @Body() body: unknown) {
      return (await this.handlers.schema(request, body)).body;
    }

    @Get("rules") @AdminLevel("read")
    async listRules(@Query() query: Record<string, unknown>) {
      return (await this.handlers.listRules(query)).body;
    }

    @Post("rules") @AdminLevel("write")
    async upsertRule(@Req() request: object, @Body() body: unknown, @Res({ passthrough: true }) response: object) {
      return this.send(response, await this.handlers.upsertRule(request, body));
    }

    @Delete("rules/:id") @HttpCode(204) @AdminLevel("write")
    async deleteRule(@Param() params: Record<string, unknown>) {
      await this.handlers.deleteRule(params);
    }

    @Post("explain") @HttpCode(200) @AdminLevel("read")
    async explain(@Req() request: object, @Body() body: unknown) {
      return (await this.handlers.explain(request, body)).body;
    }

    @Post("simulate") @HttpCode(200) @AdminLevel("read")
    async simulate(@Req() request: object, @Body() body: unknown) {
      return (await this.handlers.simulate(request, body)).body;
    }

    @Get("health") @AdminLevel("read")
    health() {
      return this.handlers.health().body;
    }
  }
  return QpPolicyAdminController;
}
