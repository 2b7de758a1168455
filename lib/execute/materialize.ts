// Raw rows → objects. Typed results are fresh instances of the entity class (never objects
// TypeORM tracks) carrying only the projected members; dynamic rows are plain nested objects.
// How a node's rows are read is worked out once per compiled node (a reader), not per value:
// a page of 100 rows × 14 columns would otherwise repeat the same metadata lookups 1,400 times.
import type { Driver } from "typeorm";
import { type ProjectedColumn, type ProjectionNode, sameColumn } from "../plan/projection.js";
import { columnMetadataOf } from "../compile/sql-writer.js";
import type { ColumnMember } from "../model/entity-model.js";
import { type Hydrate, hydratorOf } from "./hydrate.js";

export interface Materialized {
  readonly object: Record<string, unknown>;
  /** Raw key values by column alias, for loading the node's collections. */
  readonly row: Record<string, unknown>;
}

type Write = (target: Record<string, unknown>, value: unknown) => void;

/** How one returned column lands on its object: where it is read, how it is hydrated and set. */
interface ColumnStep {
  readonly alias: string;
  readonly hydrate: Hydrate;
  readonly write: Write;
}

interface Reader {
  /** The compiled columns this reader was made for: a node compiled again gets a new reader. */
  readonly columns: readonly ProjectedColumn[];
  readonly driver: Driver;
  readonly prototype: object | null;
  readonly steps: readonly ColumnStep[];
  /** Each reference: its member name, the aliases of its primary keys (all null: no row) and its node. */
  readonly references: readonly { readonly name: string; readonly keyAliases: readonly string[]; readonly node: ProjectionNode }[];
}

const typedReaders = new WeakMap<ProjectionNode, Reader>();
const dynamicReaders = new WeakMap<ProjectionNode, Reader>();

function readerOf(driver: Driver, node: ProjectionNode, typed: boolean): Reader {
  const readers = typed ? typedReaders : dynamicReaders;
  let reader = readers.get(node);
  if (reader?.columns !== node.columns || reader.driver !== driver) readers.set(node, (reader = newReader(driver, node, typed)));
  return reader;
}

function newReader(driver: Driver, node: ProjectionNode, typed: boolean): Reader {
  // A typed result also returns the keys 2.1.5 adds below the root (ProjectionNode.keys), read
  // as hidden columns on every target already.
  const returned = (c: ProjectedColumn) => !c.hidden || (typed && node.keys.some((key) => sameColumn(key, c.member)));
  const steps = node.columns.filter(returned).map((c) => ({
    alias: c.alias,
    hydrate: hydratorOf(driver, columnMetadataOf(c.member)),
    write: typed ? typedWrite(c.member) : dynamicWrite(c.member),
  }));
  const references = [...node.references].map(([name, { node: child }]) => ({
    name,
    keyAliases: child.columns.filter((c) => child.model.primaryKeys.includes(c.member)).map((c) => c.alias),
    node: child,
  }));
  const prototype = typed ? (node.model.target as { prototype: object }).prototype : null;
  return { columns: node.columns, driver, prototype, steps, references };
}

/**
 * A typed column's setter: TypeORM's `setEntityValue` where it does more than assign (a virtual
 * relation id column), otherwise the assignment itself; an embedded column creates each embedded
 * object (its class's instance) when first reached, as TypeORM does, without its per-call copy
 * of the chain and recursion.
 */
function typedWrite(member: ColumnMember): Write {
  const metadata = columnMetadataOf(member);
  const property = metadata.propertyName;
  const chain = metadata.embeddedMetadata?.embeddedMetadataTree;
  if (chain) {
    return (target, value) => {
      let at = target;
      for (const embedded of chain) at = (at[embedded.propertyName] ??= embedded.create()) as Record<string, unknown>;
      at[property] = value;
    };
  }
  const virtualRelationId = !metadata.entityMetadata.isJunction && metadata.isVirtual && metadata.referencedColumn && metadata.referencedColumn.propertyName !== property;
  if (virtualRelationId) return (target, value) => metadata.setEntityValue(target, value);
  return (target, value) => {
    target[property] = value;
  };
}

/** A dynamic row's setter: plain nested objects along the property path. */
function dynamicWrite(member: ColumnMember): Write {
  const parts = member.propertyPath.split(".");
  const last = parts.pop()!;
  if (parts.length === 0) {
    return (target, value) => {
      target[last] = value;
    };
  }
  return (target, value) => {
    let at = target;
    for (const part of parts) at = (at[part] ??= {}) as Record<string, unknown>;
    at[last] = value;
  };
}

export function materialize(driver: Driver, node: ProjectionNode, row: Record<string, unknown>, typed: boolean): Record<string, unknown> {
  const reader = readerOf(driver, node, typed);
  const object: Record<string, unknown> = reader.prototype ? Object.create(reader.prototype) : {};
  for (const step of reader.steps) step.write(object, step.hydrate(row[step.alias]));
  for (const reference of reader.references) {
    // A missing reference has null keys: typed results get null, dynamic rows keep 2.1.5's
    // nested object with null members.
    const missing = typed && reference.keyAliases.every((alias) => row[alias] === null || row[alias] === undefined);
    object[reference.name] = missing ? null : materialize(driver, reference.node, row, typed);
  }
  return object;
}
