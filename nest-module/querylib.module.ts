// QueryLibModule (spec: `AddQpPolicies` + `MapQpPolicyAdmin` + `UseQpPolicyAudit` in a Nest
// application). Global: import it once, in the root module.
import { type DynamicModule, Module, type Provider } from "@nestjs/common";
import { APP_INTERCEPTOR, HttpAdapterHost, ModuleRef } from "@nestjs/core";
import { QpConfigurationError } from "../lib/index.js";
import { createAdminController, QpAdminGuard } from "./admin/controller.js";
import { QpAuditInterceptor } from "./audit.js";
import { QpExceptionFilter } from "./errors.js";
import { type QueryLibModuleAsyncOptions, type QueryLibModuleOptions, normalizeRoutePrefix, defaultRoutePrefix } from "./options.js";
import { QP_ADMIN_MODE, type QpAdminMode, QueryLibService } from "./querylib.service.js";
import { createRuntime, type QpRuntime } from "./runtime.js";
import { QP_RUNTIME, QUERYLIB_MODULE_OPTIONS } from "./tokens.js";

/** The controller path for a static admin mapping; a bad prefix is reported by the runtime factory at startup. */
function controllerPrefix(prefix: unknown): string {
  try {
    return normalizeRoutePrefix(prefix as string | undefined);
  } catch {
    return defaultRoutePrefix;
  }
}

@Module({})
export class QueryLibModule {
  /** Binds the `QueryLib.Policies` section and code-only options into a module-owned engine (or QpPolicy's). */
  static forRoot(options: QueryLibModuleOptions): DynamicModule {
    return QueryLibModule.build({ provide: QUERYLIB_MODULE_OPTIONS, useValue: options }, [], options?.admin !== undefined ? options.admin.routePrefix : null);
  }

  /**
   * The options from a factory (typically reading `QueryLib.Policies` from @nestjs/config's
   * ConfigService). An `admin` given here becomes a controller; one returned by the factory is
   * mapped on the HTTP adapter at startup.
   */
  static forRootAsync(async: QueryLibModuleAsyncOptions): DynamicModule {
    const optionsProvider: Provider = {
      provide: QUERYLIB_MODULE_OPTIONS,
      inject: async.inject ?? [],
      useFactory: async (...args: unknown[]) => {
        const options = await async.useFactory(...args);
        if (options === null || typeof options !== "object") throw new QpConfigurationError("QueryLibModule.forRootAsync: useFactory must return the module options (an object)");
        if (async.admin === undefined) return options;
        if (options.admin !== undefined) throw new QpConfigurationError("QueryLibModule.forRootAsync: admin is given both beside useFactory and by it; give it once");
        return { ...options, admin: async.admin };
      },
    };
    return QueryLibModule.build(optionsProvider, async.imports ?? [], async.admin !== undefined ? async.admin.routePrefix : null);
  }

  private static build(optionsProvider: Provider, imports: any[], staticPrefix: string | null | undefined): DynamicModule {
    const adminMode: QpAdminMode = staticPrefix === null ? "adapter" : "controller";
    return {
      module: QueryLibModule,
      global: true,
      imports,
      controllers: adminMode === "controller" ? [createAdminController(controllerPrefix(staticPrefix))] : [],
      providers: [
        optionsProvider,
        {
          provide: QP_RUNTIME,
          inject: [QUERYLIB_MODULE_OPTIONS, HttpAdapterHost, ModuleRef],
          useFactory: (options: QueryLibModuleOptions, host: HttpAdapterHost, moduleRef: ModuleRef) => createRuntime(options, host, moduleRef),
        },
        { provide: QP_ADMIN_MODE, useValue: adminMode },
        QueryLibService,
        QpAdminGuard,
        QpExceptionFilter,
        QpAuditInterceptor,
        { provide: APP_INTERCEPTOR, inject: [QP_RUNTIME], useFactory: (runtime: QpRuntime) => new QpAuditInterceptor(runtime) },
      ],
      exports: [QueryLibService, QP_RUNTIME, QpAuditInterceptor],
    };
  }
}
