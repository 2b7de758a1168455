// A source is a TypeORM Repository or SelectQueryBuilder (docs/SHAPES.md). Either becomes a
// base builder whose own conditions and joins QueryLib keeps, plus the connection to run on.
// An in-memory source is an array of entity instances (or `inMemory(Entity, rows)`).
import { type ObjectLiteral, type QueryRunner, Repository, SelectQueryBuilder } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";
import { Codes, fail } from "../errors/codes.js";
import { type EntityModel, modelOf, modelOfClass } from "../model/entity-model.js";
import type { Connection } from "../execute/run-sql.js";
import { markFreshBuilder } from "../execute/fresh-builders.js";

export type QuerySource<T extends ObjectLiteral> = Repository<T> | SelectQueryBuilder<T>;

export interface ResolvedSource {
  readonly base: SelectQueryBuilder<ObjectLiteral>;
  readonly connection: Connection;
  readonly model: EntityModel;
}

export { isFreshBuilder } from "../execute/fresh-builders.js";

export function resolveSource<T extends ObjectLiteral>(source: QuerySource<T>): ResolvedSource {
  let base: SelectQueryBuilder<ObjectLiteral>;
  if (source instanceof Repository) {
    base = source.createQueryBuilder(aliasFor(source.metadata.targetName));
    markFreshBuilder(base);
  }
  else if (source instanceof SelectQueryBuilder) base = source as SelectQueryBuilder<ObjectLiteral>;
  else return fail(Codes.EntityNotSupported, "the source must be a TypeORM Repository or SelectQueryBuilder");
  const target = base.expressionMap.mainAlias?.hasMetadata ? base.expressionMap.mainAlias.metadata.target : undefined;
  if (!target) fail(Codes.EntityNotSupported, "the query builder has no entity as its main alias");
  const dataSource = base.connection;
  const dialect = dialectOf(dataSource);
  dialect.prepare(dataSource);
  return { base, connection: { dataSource, queryRunner: (base as unknown as { queryRunner?: QueryRunner }).queryRunner, dialect }, model: modelOf(dataSource, target as Function) };
}

/** The root alias of builders QueryLib creates: the entity's name in lower camel case. */
const aliasFor = (name: string) => {
  const alias = name.charAt(0).toLowerCase() + name.slice(1);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(alias) ? alias : "root";
};

/**
 * What the source's dialect is still learning of its schema (SqlDialect.learnSchema), to wait for
 * before a first plan is compiled; null once known, and for a source resolveSource refuses (its
 * error comes from there, in its order).
 */
export function schemaLearning(source: unknown): Promise<void> | null {
  const dataSource = source instanceof Repository ? source.manager.connection : source instanceof SelectQueryBuilder ? source.connection : null;
  if (!dataSource) return null;
  let dialect;
  try {
    dialect = dialectOf(dataSource);
  } catch {
    return null;
  }
  return dialect.learnSchema?.(dataSource) ?? null;
}

const entityOfArray = Symbol("querylib.entity");

/** Tags an array with its entity class, so paths validate even when it is empty. */
export function inMemory<T extends object>(entity: new (...args: never[]) => T, rows: readonly T[]): readonly T[] {
  const tagged = [...rows];
  Object.defineProperty(tagged, entityOfArray, { value: entity });
  return tagged;
}

/** The entity model of an array's elements; null for an untagged empty array (nothing to resolve against). */
export function modelOfArray(rows: readonly object[]): EntityModel | null {
  const tagged = (rows as { [entityOfArray]?: Function })[entityOfArray];
  if (!tagged && rows.length === 0) return null;
  const entity = tagged ?? rows[0]!.constructor;
  if (!entity || entity === Object) return fail(Codes.EntityNotSupported, "an in-memory source needs entity instances, or inMemory(Entity, rows)");
  return modelOfClass(entity);
}
