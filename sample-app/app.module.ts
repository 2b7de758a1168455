// The sample app's root module: configuration (@nestjs/config), the database (@nestjs/typeorm,
// see ormconfig.ts), QueryLib (policies from the QueryLib.Policies section, entities exposed by
// public name, the admin API at /qp-admin, audit to the relational trail) and the query API.
import { type DynamicModule, Inject, Injectable, Logger, Module, type OnModuleInit } from "@nestjs/common";
import { ConfigModule, ConfigService } from "@nestjs/config";
import { TypeOrmModule } from "@nestjs/typeorm";
import { DataSource } from "typeorm";
import { createHmac } from "node:crypto";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpInMemoryTokenVault, QpPolicyContext, QpSubjectKind, QpTypeOrmBudgetLedger, QpTypeOrmRuleStore } from "../lib/index.js";
import { QpTypeOrmTokenVault } from "../lib/vaults/typeorm-vault.js";
import { QpTypeOrmAuditSink, QueryLibModule, QueryLibService } from "../nest-module/index.js";
import { type SampleDataSourceOverrides, sampleDataSourceOptions } from "../ormconfig.js";
import { AdminRoleGuard, adminRoutePrefix, adminScopeClaim, canReadPolicies, crossTenantSubject } from "./auth.js";
import { Tenant, publicNames, sampleEntities } from "./domain/entities.js";
import { type SampleSeedOptions, generateSampleData, insertSampleData } from "./domain/seed.js";
import { type StartupOutcome, prepareSampleDatabase } from "./startup.js";
import { resolveDevMode } from "./dev-mode.js";
import { resolveSampleSecrets } from "./secrets.js";
import { DevUsersController, QueryController, SAMPLE_DEV_MODE, UnknownEntityController } from "./query.controller.js";
import { SampleRuleNotifications } from "./rule-notifications.js";

export interface SampleAppOptions {
  readonly seed?: SampleSeedOptions;
  readonly database?: SampleDataSourceOverrides;
  /** Extra keys merged over the QueryLib.Policies section (tests). */
  readonly policies?: Record<string, unknown>;
  /** Ask for dev mode (dev tokens, GET /api/dev-users); refused under NODE_ENV=production (see dev-mode.ts). */
  readonly devMode?: boolean;
}

/** The configuration the app reads; QueryLib's section sits at QueryLib.Policies as the spec says. */
export function sampleConfiguration(extra: Record<string, unknown> = {}) {
  return {
    QueryLib: {
      Policies: {
        Tier: process.env.QUERYLIB_TIER ?? "Convenience",
        DryRun: false,
        StoreFailure: "LastKnownGood",
        MaxSnapshotAge: "00:05:00",
        // Replicas hear of rule changes at once where they can (rule-notifications.ts); polling is the fallback.
        RefreshInterval: process.env.QUERYLIB_REFRESH_INTERVAL ?? "00:00:10",
        Caps: { MaxPageSize: 200, MaxQueryCost: 100, MinGroupSize: 3 },
        // The README's advice, followed: no field a caller sees transformed can be ranked, probed or summed.
        InferenceProtection: true,
        ...extra,
      },
    },
  };
}

/** Runtime rules the app starts with (they live in querylib_rule; the admin API lists and edits them). */
export const sampleRules = [
  {
    id: "support-no-salary", subjectKind: QpSubjectKind.Role, subject: "support", entity: "employees", field: "salary",
    // Group is sealed by QpNoGroup, so the rule names the other five features.
    features: PolicyFeature.All & ~PolicyFeature.Group, effect: PolicyEffect.Deny, description: "Support staff never see pay",
  },
  {
    id: "analyst-initials", subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "customers", field: "name",
    features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 0 }, description: "Analysts see initials only",
  },
  {
    id: "analyst-hashed-staff", subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "employees", field: "name",
    features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Hash }, description: "Analysts see staff names as keyed hashes (equal names, equal hashes)",
  },
  {
    // #45: analysts take noisy sums and averages of balances (docs/POLICY.md, "Private aggregates")
    // instead of being refused them; they no longer select, filter, group or order by it.
    id: "analyst-private-balance", subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "customers", field: "balance",
    features: PolicyFeature.All, effect: PolicyEffect.Private, private: { lower: -2000, upper: 30000, granularity: 0.01, epsilon: 0.5 },
    description: "Analysts sum and average balances with noise, from a daily privacy budget",
  },
] as const;


/** Every entity of the sample's DataSource: its domain and QueryLib's relational stores (created by QueryLibMigrations). */
export const sampleDataSourceEntities = [...sampleEntities, ...QpTypeOrmAuditSink.entities, ...QpTypeOrmRuleStore.entities, ...QpTypeOrmTokenVault.entities, ...QpTypeOrmBudgetLedger.entities];

export const SAMPLE_OPTIONS = Symbol.for("querylib.sample.options");

/**
 * Prepares the database before the app listens (startup.ts): QueryLib's migrations, the domain's
 * tables when missing, and the seed only when no replica seeded before; nothing is ever dropped.
 */
@Injectable()
export class SampleSeeder implements OnModuleInit {
  private readonly logger = new Logger("SampleApp");
  /** Whether this process seeded the database or found the data there. */
  outcome: StartupOutcome | null = null;

  constructor(private readonly dataSource: DataSource, private readonly querylib: QueryLibService, @Inject(SAMPLE_OPTIONS) private readonly options: SampleAppOptions) {}

  async onModuleInit(): Promise<void> {
    this.outcome = await prepareSampleDatabase(this.dataSource, sampleEntities, {
      isSeeded: async () => (await this.dataSource.getRepository(Tenant).find({ select: { id: true }, take: 1 })).length > 0,
      seed: async () => {
        // Rules first (upserts by fixed id: a retry after a crash rewrites the same rules), then
        // the rows in one transaction: tenants exist only once the whole seed is in.
        for (const rule of sampleRules) await this.querylib.engine.upsertRuleAsync(rule, "seed");
        const data = generateSampleData(this.options.seed);
        await insertSampleData(this.dataSource, data);
        this.logger.log(`seeded ${data.tenants.length} tenants, ${data.customers.length} customers, ${data.orders.length} orders, ${data.items.length} items, ${data.employees.length} employees, ${data.products.length} products`);
      },
    });
    if (this.outcome === "found") this.logger.log("the database already holds the sample's data: nothing seeded, nothing dropped");
    // Load the rule snapshot before listening, so health reports the store's version and epoch from the first request on.
    await this.querylib.engine.decisionsAsync(new QpPolicyContext());
  }
}

/** The 404 of an entity name that is not exposed (query.controller.ts). */
@Module({ controllers: [UnknownEntityController] })
export class SampleFallbackModule {}

/** Guesses a user may test against each protected field a day (see configure below). */
export const sampleGuessBudget = 50;
/** ε a user may spend on each private field a day (see configure below). */
export const samplePrivacyBudget = 20;

@Module({})
export class SampleAppModule {
  static register(options: SampleAppOptions = {}): DynamicModule {
    const devMode = resolveDevMode(options.devMode === true).enabled;
    // The Hash key and the vault key: required outside dev mode, drawn per start in it (secrets.ts).
    const secrets = resolveSampleSecrets(devMode);
    const ruleNotifications = new SampleRuleNotifications();
    return {
      module: SampleAppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [() => sampleConfiguration(options.policies)] }),
        TypeOrmModule.forRoot(sampleDataSourceOptions(sampleDataSourceEntities, options.database)),
        QueryLibModule.forRootAsync({
          inject: [ConfigService, DataSource],
          // Each admin reads and writes their own tenant's rules only (Ada: Tenant:acme); dev-root holds the cross-tenant subject.
          admin: { routePrefix: adminRoutePrefix, readPolicy: "qp-read", writePolicy: "qp-write", tenantConfined: true, crossTenantSubject },
          useFactory: async (config: ConfigService, dataSource: DataSource) => ({
            policies: config.get<Record<string, unknown>>("QueryLib.Policies"),
            configure: (policyOptions) => {
              for (const [entity, name] of publicNames) policyOptions.entities.expose(entity, name);
              // Replicas on one PostgreSQL/MariaDB database share the relational vault (same value, same
              // token in every replica and after restarts); SQLite is one process, in memory by default.
              policyOptions.tokenVault = dataSource.options.type === "better-sqlite3" ? new QpInMemoryTokenVault() : new QpTypeOrmTokenVault(dataSource, { digestKey: secrets.vaultKey });
              policyOptions.hashSalt = secrets.hashSalt;
              // The per-caller guess budget (docs/POLICY.md, "Guess budget"): each user may test each
              // protected field against 50 values a day, on the app's own database, so every replica
              // charges one ledger. A request's own allowance is 10 values a field (MaxProtectedInValues),
              // so a lookup by a known e-mail costs 1 and keeps working, while a dictionary of 1,000
              // phones, or the 100,001 cents of a 1,000 bucket, would take 20 and 2,001 days of one user.
              // Only under inference protection (nothing is charged without it, and the engine refuses
              // the budget there), which the sample's policies turn on.
              if (policyOptions.inferenceProtection) {
                policyOptions.guessBudget = { ledger: new QpTypeOrmBudgetLedger(dataSource), limit: sampleGuessBudget, scope: "User", window: "Daily" };
              }
              // The privacy budget of private aggregates (#45): 20 ε a user a day on the same shared
              // ledger, and the key of sticky answers derived from the Hash key every replica shares.
              policyOptions.privacyBudget = { ledger: new QpTypeOrmBudgetLedger(dataSource), limit: samplePrivacyBudget, scope: "User", window: "Daily", delta: 1e-6 };
              policyOptions.privacyKey = new Uint8Array(createHmac("sha256", secrets.hashSalt).update("querylib sample privacy key").digest());
            },
            providers: await ruleNotifications.providers(dataSource),
            claims: { userClaim: "sub", roleClaim: "roles", tenantClaim: "tenant", customClaims: [adminScopeClaim], valueClaims: { tenantId: "tenant" } },
            audit: { sink: new QpTypeOrmAuditSink(dataSource) },
            authorizationPolicies: { "qp-read": canReadPolicies, "qp-write": AdminRoleGuard },
            dataSource,
          }),
        }),
        // The entity routes: POST /api/{name}/filter|segment|summary and GET /api/{name}/filter, guarded.
        QueryLibModule.forFeature(publicNames.map(([entity, name]) => ({ entity, path: `api/${name}` }))),
        // After forFeature's module: its routes are registered first, so this one only sees what they leave.
        SampleFallbackModule,
      ],
      controllers: devMode ? [QueryController, DevUsersController] : [QueryController],
      providers: [
        { provide: SAMPLE_OPTIONS, useValue: options }, { provide: SAMPLE_DEV_MODE, useValue: devMode },
        // A value provider: Nest still calls its shutdown hook, which closes the Redis client.
        { provide: SampleRuleNotifications, useValue: ruleNotifications }, SampleSeeder, AdminRoleGuard,
      ],
    };
  }
}
