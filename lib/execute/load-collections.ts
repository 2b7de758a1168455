// Selected collections load with one statement per collection level, keyed by the parents'
// keys (`IN (…)` over distinct keys, in chunks), so the main statement never fans out.
import { collectionParentKeys, selectProjection } from "../compile/compile-filter.js";
import type { ProjectionNode } from "../plan/projection.js";
import { Scope, SqlWriter, collectionFrom, columnMetadataOf } from "../compile/sql-writer.js";
import { toPositional } from "../compile/to-positional.js";
import { Codes, fail } from "../errors/codes.js";
import { type Connection, runStatement } from "./run-sql.js";
import { type Materialized, materialize } from "./materialize.js";

const chunkSize = 500;

export async function loadCollections(connection: Connection, node: ProjectionNode, parents: readonly Materialized[], typed: boolean): Promise<void> {
  if (parents.length === 0) return;
  for (const [name, { hop, node: child }] of node.collections) {
    const parentKeys = collectionParentKeys(hop);
    if (parentKeys.length !== 1) fail(Codes.EntityNotSupported, `selecting through "${name}" needs a single-column key`);
    const keyAlias = node.columns.find((c) => c.member.column === parentKeys[0]!.column)!.alias;
    // Keys are matched as text: drivers may return a bigint key as a string on one side only.
    const byKey = new Map<string, Materialized[]>();
    const keys: unknown[] = [];
    for (const parent of parents) {
      parent.object[name] = [];
      const key = parent.row[keyAlias];
      if (key === null || key === undefined) continue;
      const normalized = String(key);
      const siblings = byKey.get(normalized);
      if (siblings) siblings.push(parent);
      else {
        byKey.set(normalized, [parent]);
        keys.push(key);
      }
    }
    const children: Materialized[] = [];
    for (let i = 0; i < keys.length; i += chunkSize) {
      const rows = await loadChunk(connection, hop, child, keys.slice(i, i + chunkSize));
      for (const row of rows) {
        const element: Materialized = { object: materialize(connection.dataSource.driver, child, row, typed), row };
        children.push(element);
        for (const parent of byKey.get(String(row.ql_parent)) ?? []) (parent.object[name] as unknown[]).push(element.object);
      }
    }
    await loadCollections(connection, child, children, typed);
  }
  // Collections under a reference (patient.visits) hang off the referenced objects of the same rows.
  for (const [name, { node: child }] of node.references) {
    const referenced = parents.filter((p) => p.object[name] !== null && typeof p.object[name] === "object").map((p) => ({ object: p.object[name] as Record<string, unknown>, row: p.row }));
    await loadCollections(connection, child, referenced, typed);
  }
}

async function loadChunk(connection: Connection, hop: Parameters<typeof collectionFrom>[1], child: ProjectionNode, keys: unknown[]) {
  const writer = new SqlWriter(connection.dialect);
  const alias = writer.nextAlias();
  const { from, childKeys, scope: scoped } = collectionFrom(writer, hop, alias, alias);
  const scope = new Scope(writer, alias, hop.to);
  const selected: string[] = [];
  selectProjection(selected, scope, child, []);
  const order = hop.to.primaryKeys.map((k) => `${writer.column(alias, columnMetadataOf(k))} ASC`).join(", ");
  const sql = `SELECT ${selected.join(", ")}, ${childKeys[0]} AS ${writer.ref("ql_parent")} FROM ${from}${scope.joinSql()} WHERE ${childKeys[0]} IN (:...ql_keys)${scoped === null ? "" : ` AND ${scoped}`} ORDER BY ${order}`;
  return runStatement(connection, toPositional(sql, [writer.params, { ql_keys: keys }], connection.dialect));
}
