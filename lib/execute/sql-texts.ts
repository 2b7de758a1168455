// TypeORM's SQL text for statements QueryLib compiled, cached per DataSource. For a builder
// QueryLib made itself from a Repository the text depends only on the entity and the compiled
// fragments (values are parameters), so a hit builds no TypeORM builder at all. The key spells
// the fragments unambiguously whatever characters a name or an expression holds (keyOf); that
// spelling is the key itself, not a digest: it holds names from metadata, aliases and placeholders,
// never a value, and hashing it cost a W7 miss more than the lookup. Key and texts are charged to
// cacheBudgets.sqlTexts (bytes).
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { BoundedCache, cacheBudgets, estimateBytes } from "../cache/bounded-cache.js";
import type { ScopeJoin } from "../compile/sql-writer.js";
import type { Connection } from "./run-sql.js";
import { isFreshBuilder } from "./fresh-builders.js";

/** Per DataSource (the owner), by the fragments' key. */
export const sqlTexts = new BoundedCache<unknown>(cacheBudgets.sqlTexts, (texts) => estimateBytes(texts));

/** The joins of a fragment set as key parts. */
export const joinKey = (joins: readonly ScopeJoin[]) => joins.map((j) => [j.inner, j.metadata.tablePath, j.alias, j.on]);

/** `build()`'s texts, reused for the same entity, alias and `parts` on this DataSource; built every time for a host's builder. */
export function cachedTexts<T>(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, parts: readonly unknown[], build: () => T): T {
  if (!isFreshBuilder(base)) return build();
  const key = keyOf([base.expressionMap.mainAlias!.metadata.tablePath, base.alias, ...parts]);
  let texts = sqlTexts.get(connection.dataSource, key) as T | undefined;
  if (texts === undefined) sqlTexts.set(connection.dataSource, key, (texts = build()));
  return texts;
}

/**
 * Parts as one string that no other list of parts gives: a text as its length, ":" and itself;
 * a list in brackets; anything else (numbers, booleans, null) as itself and ";". Read from the
 * left it decodes back into the parts. Four times cheaper than JSON.stringify on these texts.
 */
export function keyOf(parts: readonly unknown[]): string {
  let key = "";
  for (const part of parts) key += typeof part === "string" ? `${part.length}:${part}` : Array.isArray(part) ? `[${keyOf(part)}]` : `${String(part)};`;
  return key;
}
