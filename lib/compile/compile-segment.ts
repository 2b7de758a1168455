// Segment sets combine in the database as one compound SELECT over primary keys, applied
// left to right in Sort order. UNION and EXCEPT chain flat (left to right on every dialect);
// an INTERSECT after the second set wraps what comes before it, since it binds tighter than
// UNION and EXCEPT on PostgreSQL and MariaDB and SQLite cannot parenthesise compound members.
import type { SegmentPlan } from "../plan/nodes.js";
import { Intersection } from "../shapes/enums.js";
import { Codes, fail } from "../errors/codes.js";
import { compilePredicate } from "./compile-predicate.js";
import { Scope, type SqlWriter, columnMetadataOf, metadataOf } from "./sql-writer.js";

const operators: Record<Intersection, string> = {
  [Intersection.Union]: "UNION",
  [Intersection.Intersect]: "INTERSECT",
  [Intersection.Except]: "EXCEPT",
};

/** `<root key> IN (<compound select>)` for the segment's sets. */
export function compileSegmentWhere(writer: SqlWriter, rootAlias: string, plan: SegmentPlan): string {
  if (plan.root.primaryKeys.length !== 1) fail(Codes.EntityNotSupported, `Segments need a single-column primary key on ${plan.root.name}`);
  const key = columnMetadataOf(plan.root.primaryKeys[0]!);
  const table = writer.table(metadataOf(plan.root));
  let compound = "";
  plan.sets.forEach((set, i) => {
    const alias = writer.nextAlias();
    const scope = new Scope(writer, alias, plan.root);
    const condition = set.where ? compilePredicate(scope, set.where) : null;
    const select = `SELECT ${writer.column(alias, key)} AS ${writer.ref("ql_key")} FROM ${table} ${writer.ref(alias)}${scope.joinSql()}${condition ? ` WHERE ${condition}` : ""}`;
    if (i === 0) compound = select;
    else if (i === 1 || set.intersection !== Intersection.Intersect) compound = `${compound} ${operators[set.intersection!]} ${select}`;
    else {
      const previous = writer.nextAlias();
      compound = `SELECT ${writer.ref(previous)}.${writer.ref("ql_key")} FROM (${compound}) ${writer.ref(previous)} ${operators[set.intersection!]} ${select}`;
    }
  });
  return `${writer.column(rootAlias, key)} IN (${compound})`;
}
