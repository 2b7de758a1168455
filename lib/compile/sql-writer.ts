// Collects bound parameters and table aliases for one statement, and writes joins from
// relation metadata. Identifiers come only from TypeORM metadata; values only become
// placeholders.
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { EntityMetadata } from "typeorm";
import type { RelationMetadata } from "typeorm/metadata/RelationMetadata.js";
import type { ColumnMember, EntityModel } from "../model/entity-model.js";
import type { Hop } from "../resolve/resolved-path.js";
import type { SqlDialect } from "../dialect/sql-dialect.js";
import { Codes, fail } from "../errors/codes.js";
import type { Predicate } from "../plan/nodes.js";

/** `ql_<n>`, `:ql_<n>` and SQLite's numeric form, made once per position instead of once per value. */
const parameterTexts: { name: string; placeholder: string; numeric: string }[] = [];
function parameterText(position: number) {
  let texts = parameterTexts[position];
  if (!texts) {
    const name = `ql_${position}`;
    parameterTexts[position] = texts = { name, placeholder: `:${name}`, numeric: `CAST(:${name} AS NUMERIC)` };
  }
  return texts;
}

export class SqlWriter {
  /** Named parameters (`:ql_0`, …); positions are assigned when the statement is finished. */
  readonly params: Record<string, unknown> = {};
  private paramCount = 0;
  private aliasCount = 0;
  /** True once an EXISTS this writer wrote joins a table inside it or holds another EXISTS. */
  joinedExists = false;

  /** `firstParameter`: the first `ql_<n>` this writer uses, past those a builder already holds. */
  constructor(readonly dialect: SqlDialect, firstParameter = 0) {
    this.paramCount = firstParameter;
  }

  param(value: unknown): string {
    const texts = parameterText(this.paramCount++);
    // TypeORM writes numbers into SQLite's SQL text when it binds a builder's parameters;
    // bound as text and cast back, a number stays a parameter however the builder is run.
    if (typeof value === "number" && this.dialect.inlinesNumberParameters) {
      this.params[texts.name] = String(value);
      return texts.numeric;
    }
    this.params[texts.name] = value;
    return texts.placeholder;
  }

  /** A whole value list as ONE parameter (a PostgreSQL array, SQLite's JSON text), never a number inlined by TypeORM. */
  list(value: readonly unknown[] | string): string {
    const texts = parameterText(this.paramCount++);
    this.params[texts.name] = value;
    return texts.placeholder;
  }

  /**
   * A whole value list as ONE spread parameter (`:...ql_<n>`, TypeORM's form): the text does not
   * depend on the list's length; the positional text has a placeholder per value (MySQL).
   */
  spread(values: readonly unknown[]): string {
    const texts = parameterText(this.paramCount++);
    this.params[texts.name] = values;
    return `:...${texts.name}`;
  }

  /** Table aliases of QueryLib's own joins and subqueries; never taken from the request. */
  nextAlias(): string {
    return `ql${this.aliasCount++}`;
  }

  ref(alias: string): string {
    return this.dialect.quote(alias);
  }

  table(metadata: EntityMetadata): string {
    return metadata.tablePath.split(".").map((part) => this.dialect.quote(part)).join(".");
  }

  column(alias: string, column: ColumnMetadata): string {
    return `${this.ref(alias)}.${this.dialect.quote(column.databaseName)}`;
  }
}

export const metadataOf = (model: EntityModel): EntityMetadata =>
  model.metadata ?? fail(Codes.EntityNotSupported, `${model.name} has no DataSource metadata`);

export const columnMetadataOf = (member: ColumnMember): ColumnMetadata =>
  member.column ?? fail(Codes.EntityNotSupported, `${member.name} has no DataSource metadata`);

const relationOf = (hop: Hop): RelationMetadata => hop.member.relation ?? fail(Codes.EntityNotSupported, `${hop.member.name} has no DataSource metadata`);

/**
 * A FROM scope: one entity under an alias, plus the LEFT JOINs its reference hops needed.
 * Reference joins never multiply rows, so they are safe in the main query and in counts.
 */
export interface ScopeJoin {
  readonly alias: string;
  readonly metadata: EntityMetadata;
  readonly on: string;
  /** An INNER JOIN: the query's rows all have this reference (see Scope.require). */
  readonly inner?: boolean;
}

export class Scope {
  private readonly joins = new Map<string, ScopeJoin>();
  private readonly required = new Set<string>();

  /** `correlated`: the scope of a collection's EXISTS, run once per row of its parent. */
  constructor(readonly writer: SqlWriter, readonly alias: string, readonly model: EntityModel, readonly correlated = false) {}

  /** Alias of the entity reached by following reference hops from this scope, joining as needed. */
  aliasAt(hops: readonly Hop[]): string {
    let alias = this.alias;
    let key = "";
    for (const hop of hops) {
      if (hop.kind !== "reference") throw new Error("internal: collection hop inside a scope");
      key += `.${hop.member.name}`;
      let join = this.joins.get(key);
      if (!join) {
        const next = this.writer.nextAlias();
        join = { alias: next, metadata: metadataOf(hop.to), on: referenceOn(this.writer, hop, alias, next) };
        this.joins.set(key, join);
      }
      alias = join.alias;
    }
    return alias;
  }

  /**
   * Marks the references along `hops` as present in every row the query returns (the WHERE
   * rejects rows without them), so they join INNER: same rows, and the database may then start
   * from the far end of the path (SQLite never reorders a LEFT JOIN chain).
   */
  require(hops: readonly Hop[]): void {
    let key = "";
    for (const hop of hops) this.required.add((key += `.${hop.member.name}`));
  }

  /** The joins made so far, in the order they were needed (a join may use an earlier alias). */
  joinList(): ScopeJoin[] {
    return [...this.joins].map(([key, join]) => (this.required.has(key) ? { ...join, inner: true } : join));
  }

  /** Join text for a subquery this scope is the FROM of. */
  joinSql(): string {
    return this.joinList()
      .map((j) => ` ${j.inner ? "INNER" : "LEFT"} JOIN ${this.writer.table(j.metadata)} ${this.writer.ref(j.alias)} ON ${j.on}`)
      .join("");
  }
}

/** ON condition joining a reference target (alias `to`) to its parent (alias `from`), with the target's scope (Hop.scope). */
export function referenceOn(writer: SqlWriter, hop: Hop, from: string, to: string): string {
  const relation = relationOf(hop);
  const keys = relation.isOwning
    ? relation.joinColumns.map((jc) => `${writer.column(to, jc.referencedColumn!)} = ${writer.column(from, jc)}`).join(" AND ")
    : relation.inverseRelation!.joinColumns.map((jc) => `${writer.column(to, jc)} = ${writer.column(from, jc.referencedColumn!)}`).join(" AND ");
  const scope = hopScope(writer, hop, to);
  return scope === null ? keys : `${keys} AND ${scope}`;
}

/**
 * What compiles a hop's scope: compilePredicate, registered by compile-predicate.ts when it loads
 * (it writes through Scope, so importing it here would make the two modules import each other).
 */
let scopeCompiler: ((scope: Scope, predicate: Predicate) => string) | null = null;
export function useScopeCompiler(compile: (scope: Scope, predicate: Predicate) => string): void {
  scopeCompiler = compile;
}

/**
 * The forced predicates of a hop's target (Hop.scope), on its rows under `alias`, or null: a row
 * of another scope joins as no row and matches no EXISTS (decisions/tenant-navigation.ts).
 */
export function hopScope(writer: SqlWriter, hop: Hop, alias: string): string | null {
  if (!hop.scope || hop.scope.length === 0) return null;
  // Fail closed: a scoped hop is never written without its scope.
  if (!scopeCompiler) throw new Error("internal: no predicate compiler for a hop's scope (compile-predicate.ts registers it)");
  const scope = new Scope(writer, alias, hop.to);
  const compile = scopeCompiler;
  const text = hop.scope.map((p) => compile(scope, p)).join(" AND ");
  if (scope.joinList().length > 0) throw new Error("internal: a hop's scope reads only its target's own columns");
  return `(${text})`;
}

/**
 * FROM clause of a collection's elements (alias `child`) and the condition tying them to the
 * parent row (alias `parent`), for EXISTS tests and reduced order keys; the target's scope
 * (Hop.scope) is part of that condition, and on its own in `scope` (selected collections).
 */
export function collectionFrom(writer: SqlWriter, hop: Hop, parent: string, child: string): { from: string; correlate: string; parentKeys: ColumnMetadata[]; childKeys: string[]; scope: string | null } {
  const found = collectionTables(writer, hop, parent, child);
  // The target's scope (Hop.scope) holds for every element reached: in the correlation itself.
  const scope = hopScope(writer, hop, child);
  return { ...found, correlate: scope === null ? found.correlate : `${found.correlate} AND ${scope}`, scope };
}

function collectionTables(writer: SqlWriter, hop: Hop, parent: string, child: string): { from: string; correlate: string; parentKeys: ColumnMetadata[]; childKeys: string[] } {
  const relation = relationOf(hop);
  const target = writer.table(metadataOf(hop.to));
  if (relation.isOneToMany) {
    const joinColumns = relation.inverseRelation!.joinColumns;
    return {
      from: `${target} ${writer.ref(child)}`,
      correlate: joinColumns.map((jc) => `${writer.column(child, jc)} = ${writer.column(parent, jc.referencedColumn!)}`).join(" AND "),
      parentKeys: joinColumns.map((jc) => jc.referencedColumn!),
      childKeys: joinColumns.map((jc) => writer.column(child, jc)),
    };
  }
  // Many-to-many through the junction table; the owning side holds the join columns.
  const owning = relation.isOwning ? relation : relation.inverseRelation!;
  const parentSide = relation.isOwning ? owning.joinColumns : owning.inverseJoinColumns;
  const childSide = relation.isOwning ? owning.inverseJoinColumns : owning.joinColumns;
  const junction = writer.nextAlias();
  return {
    from: `${target} ${writer.ref(child)} INNER JOIN ${writer.table(owning.junctionEntityMetadata!)} ${writer.ref(junction)} ON ${childSide
      .map((jc) => `${writer.column(junction, jc)} = ${writer.column(child, jc.referencedColumn!)}`)
      .join(" AND ")}`,
    correlate: parentSide.map((jc) => `${writer.column(junction, jc)} = ${writer.column(parent, jc.referencedColumn!)}`).join(" AND "),
    parentKeys: parentSide.map((jc) => jc.referencedColumn!),
    childKeys: parentSide.map((jc) => writer.column(junction, jc)),
  };
}
