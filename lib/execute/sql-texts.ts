// TypeORM's SQL text for statements QueryLib compiled, cached per DataSource. For a builder
// QueryLib made itself from a Repository the text depends only on the entity and the compiled
// fragments (values are parameters), so a hit builds no TypeORM builder at all. The key spells
// the fragments unambiguously whatever characters a name or an expression holds (keyOf).
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import type { ScopeJoin } from "../compile/sql-writer.js";
import type { Connection } from "./run-sql.js";
import { isFreshBuilder } from "./fresh-builders.js";

const textCaches = new WeakMap<object, Map<string, unknown>>();
const maxCachedTexts = 2000;

/** The joins of a fragment set as key parts. */
export const joinKey = (joins: readonly ScopeJoin[]) => joins.map((j) => [j.inner, j.metadata.tablePath, j.alias, j.on]);

/** `build()`'s texts, reused for the same entity, alias and `parts` on this DataSource; built every time for a host's builder. */
export function cachedTexts<T>(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, parts: readonly unknown[], build: () => T): T {
  if (!isFreshBuilder(base)) return build();
  const key = keyOf([base.expressionMap.mainAlias!.metadata.tablePath, base.alias, ...parts]);
  let cache = textCaches.get(connection.dataSource);
  if (!cache) textCaches.set(connection.dataSource, (cache = new Map()));
  let texts = cache.get(key) as T | undefined;
  if (texts === undefined) {
    if (cache.size >= maxCachedTexts) cache.clear();
    cache.set(key, (texts = build()));
  }
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
