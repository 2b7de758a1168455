// The engine's view of an entity: its members by name (exact, else unique case-insensitive
// match), built once per entity and data source from TypeORM metadata and then cached, so
// no request does reflection.
import type { DataSource, EntityMetadata } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { RelationMetadata } from "typeorm/metadata/RelationMetadata.js";
import { getMetadataArgsStorage } from "typeorm";
import { markApplicationObject } from "../cache/bounded-cache.js";
import { Codes, fail } from "../errors/codes.js";
import { type FieldKind, fieldKindOf } from "./field-kind.js";

export interface ColumnMember {
  readonly kind: "column";
  readonly name: string;
  /** Property path from the entity root, through embeddeds ("address.city"). */
  readonly propertyPath: string;
  readonly fieldKind: FieldKind;
  readonly nullable: boolean;
  /** The enum of an enum column (values array or enum object), else null. */
  readonly enumDefinition: unknown;
  /** Present when the model comes from a DataSource. */
  readonly column: ColumnMetadata | null;
}

export interface EmbeddedMember {
  readonly kind: "embedded";
  readonly name: string;
  readonly scope: MemberScope;
  /** The embedded class (its own decorators apply to its members). */
  readonly target: Function;
}

export interface RelationMember {
  readonly kind: "reference" | "collection";
  readonly name: string;
  readonly target: () => EntityModel;
  readonly relation: RelationMetadata | null;
}

export type Member = ColumnMember | EmbeddedMember | RelationMember;

export class MemberScope {
  private readonly exact = new Map<string, Member>();
  private readonly folded = new Map<string, Member[]>();

  add(member: Member): void {
    // Plans reach members and models; they live as long as the DataSource, so caches do not charge them.
    markApplicationObject(member);
    this.exact.set(member.name, member);
    const key = member.name.toLowerCase();
    this.folded.set(key, [...(this.folded.get(key) ?? []), member]);
  }

  /** Exact name first; else the single case-insensitive match; two matches are ambiguous. */
  find(name: string): Member | "ambiguous" | undefined {
    const exact = this.exact.get(name);
    if (exact) return exact;
    const folded = this.folded.get(name.toLowerCase());
    if (!folded) return undefined;
    return folded.length === 1 ? folded[0] : "ambiguous";
  }

  all(): Member[] {
    return [...this.exact.values()];
  }
}

export interface EntityModel {
  readonly target: Function;
  readonly name: string;
  readonly scope: MemberScope;
  readonly primaryKeys: readonly ColumnMember[];
  /** Present when the model comes from a DataSource. */
  readonly metadata: EntityMetadata | null;
}

/** A column under a scope, with its dotted path and each member on the way (embeddeds, then the column). */
export interface ScopeColumnPath {
  readonly column: ColumnMember;
  readonly path: string;
  /** Each member from the scope to the column, with the scope it belongs to. */
  readonly steps: readonly { readonly scope: MemberScope; readonly member: ColumnMember | EmbeddedMember }[];
}

const columnPaths = new WeakMap<MemberScope, readonly ScopeColumnPath[]>();

/**
 * Every column of a scope, embedded members flattened, in declaration order: the one walk of a
 * scope's columns (projections, the policy's default selection, primary keys). Once per scope:
 * the model is fixed.
 */
export function columnPathsOf(scope: MemberScope): readonly ScopeColumnPath[] {
  let paths = columnPaths.get(scope);
  if (!paths) columnPaths.set(scope, (paths = walkColumns(scope, "", [])));
  return paths;
}

function walkColumns(scope: MemberScope, prefix: string, via: ScopeColumnPath["steps"]): ScopeColumnPath[] {
  return scope.all().flatMap((member) => {
    if (member.kind === "column") return [{ column: member, path: prefix + member.name, steps: [...via, { scope, member }] }];
    if (member.kind === "embedded") return walkColumns(member.scope, `${prefix}${member.name}.`, [...via, { scope, member }]);
    return [];
  });
}

const fromDataSource = new WeakMap<DataSource, Map<Function | string, EntityModel>>();
const fromDecorators = new Map<Function, EntityModel>();

/** The model of an entity of a DataSource, built once. */
export function modelOf(dataSource: DataSource, target: Function | string): EntityModel {
  let models = fromDataSource.get(dataSource);
  if (!models) fromDataSource.set(dataSource, (models = new Map()));
  const cached = models.get(target);
  if (cached) return cached;
  if (!dataSource.hasMetadata(target)) {
    fail(Codes.EntityNotSupported, `${typeof target === "string" ? target : target.name} is not an entity of this DataSource`);
  }
  const metadata = dataSource.getMetadata(target);
  const model = buildFromMetadata(metadata, (t) => modelOf(dataSource, t));
  markApplicationObject(model);
  models.set(target, model);
  models.set(metadata.target, model);
  return model;
}

function buildFromMetadata(metadata: EntityMetadata, lookup: (t: Function | string) => EntityModel): EntityModel {
  const columnMember = (column: ColumnMetadata): ColumnMember => ({
    kind: "column",
    name: column.propertyName,
    propertyPath: column.propertyPath,
    fieldKind: column.enum ? "enum" : fieldKindOf(column.type),
    nullable: column.isNullable,
    enumDefinition: column.enum ?? null,
    column,
  });
  const fill = (scope: MemberScope, columns: ColumnMetadata[], embeddeds: EntityMetadata["embeddeds"], relations: RelationMetadata[]) => {
    for (const column of columns) if (!column.relationMetadata || column.propertyName !== column.relationMetadata.propertyName) scope.add(columnMember(column));
    for (const embedded of embeddeds) {
      const inner = new MemberScope();
      fill(inner, embedded.columns, embedded.embeddeds, embedded.relations);
      scope.add({ kind: "embedded", name: embedded.propertyName, scope: inner, target: embedded.type as Function });
    }
    for (const relation of relations) {
      scope.add({
        kind: relation.isOneToMany || relation.isManyToMany ? "collection" : "reference",
        name: relation.propertyName,
        target: () => lookup(relation.inverseEntityMetadata.target),
        relation,
      });
    }
  };
  const scope = new MemberScope();
  fill(scope, metadata.ownColumns.filter((c) => !c.embeddedMetadata), metadata.embeddeds, metadata.ownRelations.filter((r) => !r.embeddedMetadata));
  // Keys are the scope's own member objects, so identity comparisons hold everywhere.
  const columns = columnPathsOf(scope).map((c) => c.column);
  return {
    target: metadata.target as Function,
    name: metadata.name,
    scope,
    primaryKeys: metadata.primaryColumns.map((c) => columns.find((m) => m.column === c) ?? columnMember(c)),
    metadata,
  };
}

/**
 * The model of an entity class for in-memory arrays, read from TypeORM's decorator storage
 * without any DataSource (the same decorators, so the same paths resolve).
 */
export function modelOfClass(target: Function): EntityModel {
  const cached = fromDecorators.get(target);
  if (cached) return cached;
  const storage = getMetadataArgsStorage();
  const lineage = (t: Function): Function[] => {
    const chain: Function[] = [];
    for (let c: any = t; c && c !== Function.prototype && c !== Object; c = Object.getPrototypeOf(c)) chain.push(c);
    return chain;
  };
  const primaryKeys: ColumnMember[] = [];
  const fill = (scope: MemberScope, owner: Function, prefix: string) => {
    const targets = lineage(owner);
    for (const column of storage.columns.filter((c) => targets.includes(c.target as Function))) {
      if (column.mode === "virtual-property") continue;
      const designType = Reflect.getMetadata?.("design:type", (column.target as Function).prototype, column.propertyName);
      const options = column.options;
      const member: ColumnMember = {
        kind: "column",
        name: column.propertyName,
        propertyPath: prefix + column.propertyName,
        fieldKind: options.enum ? "enum" : fieldKindOf(options.type ?? designType),
        nullable: options.nullable === true,
        enumDefinition: options.enum ?? null,
        column: null,
      };
      scope.add(member);
      if (options.primary && prefix === "") primaryKeys.push(member);
    }
    for (const embedded of storage.embeddeds.filter((e) => targets.includes(e.target as Function))) {
      const inner = new MemberScope();
      const embeddedType = embedded.type() as Function;
      fill(inner, embeddedType, `${prefix}${embedded.propertyName}.`);
      scope.add({ kind: "embedded", name: embedded.propertyName, scope: inner, target: embeddedType });
    }
    for (const relation of storage.relations.filter((r) => targets.includes(r.target as Function))) {
      const targetType = relation.type as () => Function;
      scope.add({
        kind: relation.relationType === "one-to-many" || relation.relationType === "many-to-many" ? "collection" : "reference",
        name: relation.propertyName,
        target: () => modelOfClass(targetType()),
        relation: null,
      });
    }
  };
  const scope = new MemberScope();
  fill(scope, target, "");
  const model: EntityModel = { target, name: target.name, scope, primaryKeys, metadata: null };
  markApplicationObject(model);
  fromDecorators.set(target, model);
  return model;
}
