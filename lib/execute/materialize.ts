// Raw rows → objects. Typed results are fresh instances of the entity class (never objects
// TypeORM tracks) carrying only the projected members; dynamic rows are plain nested objects.
import type { Driver } from "typeorm";
import type { EmbeddedMetadata } from "typeorm/metadata/EmbeddedMetadata.js";
import type { ProjectionNode } from "../compile/projection.js";
import { columnMetadataOf } from "../compile/sql-writer.js";
import type { ColumnMember } from "../model/entity-model.js";

export interface Materialized {
  readonly object: Record<string, unknown>;
  /** Raw key values by column alias, for loading the node's collections. */
  readonly row: Record<string, unknown>;
}

export function hydrateValue(driver: Driver, member: ColumnMember, raw: unknown): unknown {
  return driver.prepareHydratedValue(raw, columnMetadataOf(member));
}

/** The embedded objects a column sits in, outermost first; null for a column of the entity itself. */
const embeddedChains = new WeakMap<ColumnMember, readonly EmbeddedMetadata[] | null>();

export function setMember(target: Record<string, unknown>, member: ColumnMember, value: unknown, typed: boolean): void {
  if (typed) {
    const metadata = columnMetadataOf(member);
    let chain = embeddedChains.get(member);
    if (chain === undefined) embeddedChains.set(member, (chain = metadata.embeddedMetadata ? metadata.embeddedMetadata.embeddedMetadataTree : null));
    if (chain === null) {
      metadata.setEntityValue(target, value);
      return;
    }
    // TypeORM's setEntityValue for an embedded column, without its per-call copy of the chain and
    // recursion: each embedded object is created (its class's instance) when first reached.
    let at = target;
    for (const embedded of chain) at = (at[embedded.propertyName] ??= embedded.create()) as Record<string, unknown>;
    at[metadata.propertyName] = value;
    return;
  }
  const parts = member.propertyPath.split(".");
  let at = target;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts[parts.length - 1]!] = value;
}

export function materialize(driver: Driver, node: ProjectionNode, row: Record<string, unknown>, typed: boolean): Record<string, unknown> {
  const object: Record<string, unknown> = typed ? Object.create((node.model.target as { prototype: object }).prototype) : {};
  for (const column of node.columns) {
    if (!column.hidden) setMember(object, column.member, hydrateValue(driver, column.member, row[column.alias]), typed);
  }
  for (const [name, { node: child }] of node.references) {
    // A missing reference has null keys: typed results get null, dynamic rows keep 2.1.5's
    // nested object with null members.
    const missing = child.columns.filter((c) => child.model.primaryKeys.includes(c.member)).every((c) => row[c.alias] === null || row[c.alias] === undefined);
    object[name] = missing && typed ? null : materialize(driver, child, row, typed);
  }
  return object;
}
