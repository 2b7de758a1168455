// QueryLibModule (spec: `AddQpPolicies` + `MapQpPolicyAdmin` + `UseQpPolicyAudit` in a Nest
// application). Global: import it once, in the root module. forRoot and forRootAsync come from
// Nest's ConfigurableModuleBuilder (useFactory, useClass or useExisting, inject, imports); the
// `admin` mapping is an extra of both, since where it is known decides how it is served: given to
// forRoot or beside forRootAsync's factory it becomes a Nest controller, returned by the factory
// it is mapped on the HTTP adapter while the application initializes (same routes and behaviour).
import { ConfigurableModuleBuilder, type DynamicModule, Module } from "@nestjs/common";
import { APP_FILTER, APP_INTERCEPTOR, HttpAdapterHost, ModuleRef } from "@nestjs/core";
import { QpConfigurationError } from "../lib/index.js";
import { createAdminController, QpAdminGuard } from "./admin/controller.js";
import { QpAuditInterceptor } from "./audit.js";
import { QpExceptionFilter, QpModuleExceptionFilter } from "./errors.js";
import { type QpFeatureEntity, type QpFeatureOptions, featureModule } from "./feature.js";
import { type QpAdminOptions, type QueryLibModuleOptions, normalizeRoutePrefix, defaultRoutePrefix } from "./options.js";
import { QP_ADMIN_MODE, type QpAdminMode, QueryLibService } from "./querylib.service.js";
import { createRuntime, type QpRuntime } from "./runtime.js";
import { QP_RUNTIME, QUERYLIB_MODULE_OPTIONS, QUERYLIB_OPTIONS_INPUT } from "./tokens.js";

/** The controller path for a static admin mapping; a bad prefix is reported by the runtime factory at startup. */
function controllerPrefix(prefix: unknown): string {
  try {
    return normalizeRoutePrefix(prefix as string | undefined);
  } catch {
    return defaultRoutePrefix;
  }
}

/** The options as given (forRoot's, without `admin`; the factory's result) and the `admin` extra → the module's options. */
function moduleOptions(given: unknown, admin: QpAdminOptions | undefined): QueryLibModuleOptions {
  if (given === null || typeof given !== "object") throw new QpConfigurationError("QueryLibModule.forRootAsync: useFactory must return the module options (an object)");
  const options = given as QueryLibModuleOptions;
  if (admin === undefined) return options;
  if (options.admin !== undefined) throw new QpConfigurationError("QueryLibModule.forRootAsync: admin is given both beside useFactory and by it; give it once");
  return { ...options, admin };
}

function queryLibDefinition(definition: DynamicModule, admin: QpAdminOptions | undefined): DynamicModule {
  const adminMode: QpAdminMode = admin === undefined ? "adapter" : "controller";
  return {
    ...definition,
    global: true,
    controllers: adminMode === "controller" ? [createAdminController(controllerPrefix(admin!.routePrefix))] : [],
    providers: [
      ...(definition.providers ?? []),
      { provide: QUERYLIB_MODULE_OPTIONS, inject: [QUERYLIB_OPTIONS_INPUT], useFactory: (given: unknown) => moduleOptions(given, admin) },
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
      // QueryLib's own errors answered wherever its decorators and service are used, without @UseFilters (issue #41).
      { provide: APP_FILTER, inject: [QP_RUNTIME, HttpAdapterHost], useFactory: (runtime: QpRuntime, host: HttpAdapterHost) => new QpModuleExceptionFilter(runtime, host) },
    ],
    exports: [QueryLibService, QP_RUNTIME, QpAuditInterceptor],
  };
}

const { ConfigurableModuleClass, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } = new ConfigurableModuleBuilder<QueryLibModuleOptions>({ optionsInjectionToken: QUERYLIB_OPTIONS_INPUT })
  .setClassMethodName("forRoot")
  .setFactoryMethodName("createQueryLibOptions")
  .setExtras<{ admin?: QpAdminOptions }>({ admin: undefined }, (definition, extras) => queryLibDefinition(definition, extras.admin))
  .build();

/** What forRoot takes: the module options. */
export type QueryLibModuleForRootOptions = typeof OPTIONS_TYPE;
/** What forRootAsync takes: useFactory (with inject), useClass or useExisting, imports, and `admin`. */
export type QueryLibModuleAsyncOptions = typeof ASYNC_OPTIONS_TYPE;

/** The module of QueryLibModule.forFeature's controllers. */
@Module({})
export class QueryLibFeatureModule {}

@Module({})
export class QueryLibModule extends ConfigurableModuleClass {
  /**
   * Guarded query routes for exposed entities, one controller each: POST {path}/filter (and GET,
   * its query string), POST {path}/segment, POST {path}/summary, as `shapes` lists.
   */
  static forFeature(entities: readonly QpFeatureEntity[], options?: QpFeatureOptions): DynamicModule {
    return featureModule(QueryLibFeatureModule, entities, options);
  }
}
