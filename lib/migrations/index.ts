// QueryLib's TypeORM migrations, oldest first: add them to the host's DataSource `migrations`
// (`migrations: [...QueryLibMigrations, ...yourMigrations]`) and run them as the host runs its own.
import type { MigrationInterface } from "typeorm";
import { QueryLibSchema1795564800000 } from "./schema-v1.js";
import { QueryLibBudget1795910400000 } from "./budget-v2.js";
import { QueryLibSchema1796515200000 } from "./schema-v2.js";
import { QueryLibRelease1796601600000 } from "./release-v3.js";

export { QueryLibSchema1795564800000, QueryLibBudget1795910400000, QueryLibSchema1796515200000, QueryLibRelease1796601600000 };

/** Every QueryLib migration class, oldest first (one per version of QueryLib's tables). */
export const QueryLibMigrations: (new () => MigrationInterface)[] = [QueryLibSchema1795564800000, QueryLibBudget1795910400000, QueryLibSchema1796515200000, QueryLibRelease1796601600000];
