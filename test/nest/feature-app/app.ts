// The feature app: QueryLibModule.forRoot exposing the fixture's two entities, and one
// QueryLibModule.forFeature call that mounts their query routes behind the fixture's own guard.
// No hand-written query controller: every route here is forFeature's.
import "reflect-metadata";
import { type CanActivate, type DynamicModule, type ExecutionContext, Injectable, type INestApplication, Module, UnauthorizedException } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { DataSource } from "typeorm";
import { QpInMemoryAuditSink, QueryLibModule, type QueryLibModuleOptions } from "../../../nest-module/index.js";
import { type Dialect, openIsolatedDatabase } from "../../support/databases.js";
import { testAuthentication } from "../support.js";
import { Clinic, Patient, clinicRows, featureEntities, patientRows } from "./entities.js";

/** Staff only: no principal is 401, a principal without the "staff" role 403. Counts its runs. */
@Injectable()
export class StaffGuard implements CanActivate {
  static runs = 0;

  canActivate(context: ExecutionContext): boolean {
    StaffGuard.runs++;
    const user = context.switchToHttp().getRequest<{ user?: { roles?: string[] } }>().user;
    if (!user) throw new UnauthorizedException("sign in first");
    return (user.roles ?? []).includes("staff");
  }
}

/** Caps small enough to reach in a test: five conditions, pages of 20, groups of two or more. */
export const featurePolicies = { Tier: "Strict", Caps: { MaxConditions: 5, MaxPageSize: 20, MinGroupSize: 2 } };

export function featureRootOptions(dataSource: DataSource, sink: QpInMemoryAuditSink): QueryLibModuleOptions {
  return {
    policies: featurePolicies,
    configure: (options) => {
      options.entities.expose(Patient, "patients");
      options.entities.expose(Clinic, "clinics");
    },
    claims: { valueClaims: { tenantId: "tenant" } },
    audit: { sink },
    dataSource,
  };
}

/** The application module: the root module options and the app's one forFeature call. */
export function featureAppModule(dataSource: DataSource, sink: QpInMemoryAuditSink): DynamicModule {
  @Module({})
  class FeatureAppModule {}
  return {
    module: FeatureAppModule,
    imports: [
      QueryLibModule.forRoot(featureRootOptions(dataSource, sink)),
      QueryLibModule.forFeature([
        { entity: Patient, path: "patients", exports: true },
        { entity: Clinic, path: "clinics", shapes: ["filter", "summary"] },
      ], { guards: [StaffGuard] }),
    ],
  };
}

export interface FeatureApp {
  readonly app: INestApplication;
  readonly url: string;
  readonly dataSource: DataSource;
  readonly sink: QpInMemoryAuditSink;
  close(): Promise<void>;
}

/** Starts the feature app on 127.0.0.1 (ephemeral port) over `dataSource`; header x-test-claims is the principal. */
export async function startFeatureApp(dataSource: DataSource): Promise<FeatureApp> {
  const sink = new QpInMemoryAuditSink();
  const app = await NestFactory.create(featureAppModule(dataSource, sink), { logger: false, abortOnError: false });
  app.use(testAuthentication);
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, dataSource, sink, close: () => app.close() };
}

/** Inserts the fixture's clinics and patients. */
export async function seedFeatureData(dataSource: DataSource): Promise<void> {
  await dataSource.getRepository(Clinic).insert(clinicRows());
  await dataSource.getRepository(Patient).insert(patientRows());
}

const opened = new Map<Dialect, Promise<DataSource>>();

/** The seeded fixture database of a dialect (a database of its own on PostgreSQL and MariaDB), once per process. */
export function featureDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    pending = openIsolatedDatabase(dialect, "querylib_feature", featureEntities).then(async (dataSource) => {
      await seedFeatureData(dataSource);
      return dataSource;
    });
    opened.set(dialect, pending);
  }
  return pending;
}
