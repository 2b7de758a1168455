// What a guarded builder may hand a host. A builder is the plan after the policy's transform,
// compiled and not run: the host runs it with TypeORM (getMany, getRawMany, its own joins or
// locks), so nothing of QueryLib's own materialization happens to its rows. A builder is
// therefore refused when its rows would carry
// - a value only that materialization transforms (a mask, generalization, hash, token, truncation,
//   format, default or mutation on a selected member, a group key or an extreme of one):
//   TransformRequiresMaterialization (16), naming the members;
// - a column the caller may not select that the builder reads anyway: the primary keys TypeORM
//   hydrates entities by (the root's and every joined entity's) and the keys a collection is
//   loaded by. A key the caller may not see is FieldDeniedForSelect (2); a transformed key is 16.
// Forced predicates, the group floor (in SQL), drops, caps and cost are in the plan already. The
// forced predicates are also pinned in a join (pinForcedScope), where a host's where() or
// orWhere() cannot undo them.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { PolicyEffect, PolicyFeature } from "../shapes/policy-enums.js";
import type { EntityModel, ColumnMember } from "../model/entity-model.js";
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import type { FilterPlan, Predicate } from "../plan/nodes.js";
import { collectionParentKeys } from "../compile/compile-filter.js";
import { compilePredicate } from "../compile/compile-predicate.js";
import { Scope, SqlWriter, columnMetadataOf } from "../compile/sql-writer.js";
import type { SqlDialect } from "../dialect/sql-dialect.js";
import type { TransformTree } from "../transform/apply.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { policyMember } from "../decisions/references.js";
import { outputChainOf } from "./sanitizer.js";

/** Every member path of a transform tree whose values are transformed on output ("contact.email"). */
export function transformedPaths(tree: TransformTree, prefix = ""): string[] {
  return [...tree].flatMap(([name, node]) => [...(node.chain ? [`${prefix}${name}`] : []), ...transformedPaths(node.children, `${prefix}${name}.`)]);
}

/** Refuses a builder whose rows would carry transformed values (see the top of this file). */
export function refuseMaterialized(transforms: TransformTree, what: string): void {
  const paths = transformedPaths(transforms);
  if (paths.length === 0) return;
  policyError(
    PolicyErrorCode.TransformRequiresMaterialization,
    `${what} would return ${paths.join(", ")} untransformed: only QueryLib's own materialization applies ${paths.length > 1 ? "their" : "its"} `
      + "transformation; leave them out of the request, or run it with toListAsync",
    "selects",
  );
}

/** A key column the builder reads, with the entity that declares it and where it sits in the result. */
interface ReadKey {
  readonly model: EntityModel;
  readonly column: ColumnMember;
  readonly path: string;
}

/** The keys a builder of `plan` reads besides what the caller selected: every entity's primary key, every collection's parent key. */
function keysRead(plan: FilterPlan): ReadKey[] {
  const keys = new Map<string, ReadKey>();
  const add = (model: EntityModel, column: ColumnMember, prefix: string) => keys.set(`${prefix}${column.propertyPath}`, { model, column, path: `${prefix}${column.propertyPath}` });
  for (const column of plan.root.primaryKeys) add(plan.root, column, "");
  for (const path of plan.selects ?? []) {
    let prefix = "";
    for (const hop of path.end.kind === "relation" ? [...path.hops, path.end.hop] : path.hops) {
      if (hop.kind === "collection") for (const column of collectionParentKeys(hop)) add(hop.from, column, prefix);
      prefix += `${hop.member.name}.`;
      for (const column of hop.to.primaryKeys) add(hop.to, column, prefix);
    }
  }
  return [...keys.values()];
}

/** Refuses a Filter builder whose rows would carry a transformed value or a key the caller may not see as it is stored. */
export function refuseUnprotected(plan: FilterPlan, transforms: TransformTree, decisions: DecisionTable, what: string): void {
  refuseMaterialized(transforms, what);
  refuseHiddenKeys(plan, decisions, what);
}

/** Refuses a builder that reads a key its caller may not see, or sees only transformed (see the top of this file). */
function refuseHiddenKeys(plan: FilterPlan, decisions: DecisionTable, what: string): void {
  for (const key of keysRead(plan)) {
    const member = policyMember(key.model.target, key.model.scope, key.column);
    const decision = decisions.decide(member, PolicyFeature.Select);
    const why = `${what} reads ${key.path}, the key TypeORM identifies ${key.model.name} rows by`;
    if (decision.effect === PolicyEffect.Deny) {
      policyError(PolicyErrorCode.FieldDeniedForSelect, `${why}, which this caller may not select (${decision.source}); run the request with toListAsync`, "selects");
    }
    if (outputChainOf(member, decision)) {
      policyError(PolicyErrorCode.TransformRequiresMaterialization, `${why}, which this caller sees only transformed; run the request with toListAsync`, "selects");
    }
  }
}

/** The alias of the root joined to itself under the forced predicates; QueryLib's own aliases are ql<n>. */
const scopeAlias = "ql_scope";

/**
 * Pins forced predicates where a host cannot reach them: an INNER JOIN of the root to itself on
 * its primary key and the forced predicates. The WHERE holds them too; TypeORM's where()
 * replaces a builder's conditions and orWhere() appends `OR …` to them, so a host's where("…")
 * or orWhere("…") would drop or widen a WHERE alone (found by test/policy/guarded-builders.test.ts),
 * while the join still keeps every row of another tenant out.
 */
export function pinForcedScope(qb: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, root: EntityModel, forced: readonly Predicate[]): void {
  if (forced.length === 0) return;
  // Parameter names past those the builder holds (ql_<n>), so none is overwritten.
  const used = Object.keys(qb.expressionMap.parameters).filter((name) => /^ql_\d+$/.test(name)).map((name) => Number(name.slice(3)));
  const writer = new SqlWriter(dialect, used.reduce((next, n) => Math.max(next, n + 1), 0));
  const scope = new Scope(writer, scopeAlias, root);
  const keys = root.primaryKeys.map((key) => `${writer.column(scopeAlias, columnMetadataOf(key))} = ${writer.column(qb.alias, columnMetadataOf(key))}`);
  const tests = forced.map((predicate) => `(${compilePredicate(scope, predicate)})`);
  qb.innerJoin(root.target, scopeAlias, [...keys, ...tests].join(" AND "));
  Object.assign(qb.expressionMap.parameters, writer.params);
}
