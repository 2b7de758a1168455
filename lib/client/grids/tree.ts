// What the MUI and Refine adapters need beyond the shared core (core.ts), kept out of it: a
// condition tree that mixes the core's grid-neutral predicates with conditions naming a QueryLib
// operator directly (Refine's `between`, `ina`, `eqs`, MUI's folded isAnyOf, a date-time minute),
// checked as the core checks its own (the column exists, the caller may filter by it and use the
// operator, the operator takes the column's DataType, the values are typed by it, a list stays
// under the field's inference limit); and the answer of a transport failure as the column's error.
import { Connector, DataType, Intersection, Operator } from "../../shapes/enums.js";
import type { ConditionSet, Filter, PageBy, Segment, Summary } from "../../shapes/shapes.js";
import { operators } from "../../shapes/operator-table.js";
import {
  type BuiltRequest, type GridAggregate, type GridColumn, type GridCore, type GridPredicate, GridQueryError, GridRefusal, type GridSort, type GridValue, type QueryLibErrorBody, type TreePart, columnOfError,
} from "./core.js";

/** A condition naming QueryLib's operator; `values` are typed by the column's DataType. */
export interface OperatorNode { readonly kind: "operator"; readonly column: string; readonly operator: Operator; readonly values: readonly GridValue[] }
export interface NodeGroup { readonly kind: "group"; readonly connector: "AND" | "OR"; readonly parts: readonly Node[] }
/** A node of a mixed tree: a core predicate (not a group), an operator condition, or a group of nodes. */
export type Node = Exclude<GridPredicate, { kind: "group" }> | OperatorNode | NodeGroup;

export const anyOf = (...parts: Node[]): NodeGroup => ({ kind: "group", connector: "OR", parts });
export const allOf = (...parts: Node[]): NodeGroup => ({ kind: "group", connector: "AND", parts });

/** The column, if the caller may use `operator` on it (else the core's refusal codes, naming the column). */
export function requireOperator(core: GridCore, id: string, operator: Operator): GridColumn {
  const column = core.column(id);
  if (!column.filterable) throw new GridRefusal("GridFilterNotAllowed", column.id, "this caller may not filter by it");
  if (!operators[operator].dataTypes.has(column.dataType)) throw new GridRefusal("GridUnsupportedFilter", column.id, `${operator} does not apply to a ${column.dataType} column`);
  if (!column.operators.has(operator)) throw new GridRefusal("GridOperatorNotAllowed", column.id, `${operator}, which this caller may not use on it`);
  return column;
}

/** Whether the caller may use each operator on the column (for offering an option, never to send it). */
export const mayUse = (column: GridColumn, ...ops: Operator[]) => column.filterable && ops.every((op) => column.operators.has(op) && operators[op].dataTypes.has(column.dataType));

function operatorPart(core: GridCore, node: OperatorNode): TreePart {
  const column = requireOperator(core, node.column, node.operator);
  const meaning = operators[node.operator];
  const values = meaning.noValue ? [] : node.values.map((v) => core.value(column, v));
  const count = values.length;
  const ok = meaning.arity === "none" ? count === 0 : meaning.arity === "one" ? count === 1 : meaning.arity === "two" ? count === 2 : count >= 1;
  if (!ok) throw new GridRefusal("GridInvalidValue", column.id, `${node.operator} takes ${meaning.arity === "oneOrMore" ? "one or more values" : meaning.arity === "two" ? "two values" : meaning.arity === "one" ? "one value" : "no value"}, not ${count}`);
  if (meaning.listValued && column.maxInValues !== null && count > column.maxInValues) {
    throw new GridRefusal("GridInvalidValue", column.id, `a list of ${count} values; this caller may test at most ${column.maxInValues} against it`);
  }
  return { kind: "condition", column: column.id, operator: node.operator, dataType: column.dataType, values };
}

/** The condition tree of a node (checked and typed; nothing is sent). */
export function treeOf(core: GridCore, node: Node, depth = 0): TreePart {
  if (depth > 32) throw new GridRefusal("GridInvalidRequest", null, "a filter nested deeper than 32 groups");
  if (node.kind === "group") {
    if (node.parts.length === 0) throw new GridRefusal("GridInvalidRequest", null, "an empty AND/OR group");
    return { kind: "group", connector: node.connector === "OR" ? Connector.Or : Connector.And, parts: node.parts.map((p) => treeOf(core, p, depth + 1)) };
  }
  if (node.kind === "operator") return operatorPart(core, node);
  return core.predicate(node);
}

const whereOf = (core: GridCore, where: readonly Node[]) => (where.length ? treeOf(core, allOf(...where)) : null);

/** A Filter from mixed nodes (ANDed), sorts (the core's tie-break appended), selected columns and a page. */
export function buildFilter(core: GridCore, parts: { where: readonly Node[]; sorts: readonly GridSort[]; select?: readonly string[] | null; page?: PageBy | null }): BuiltRequest<Filter> {
  return core.filterFrom(whereOf(core, parts.where), parts);
}

/** A Summary from mixed nodes, as GridCore.summary builds one from predicates, except that a sort on a column that is neither a key nor an aggregate is refused. */
export function buildSummary(core: GridCore, parts: { where: readonly Node[]; groupBy: readonly string[]; aggregates: readonly GridAggregate[]; sorts: readonly GridSort[]; page?: PageBy | null }): BuiltRequest<Summary> {
  return core.summaryFrom(whereOf(core, parts.where), parts, "refuse");
}

/** A Segment: sets of mixed nodes joined in order (the first set's intersection is null), sorts, columns and a page as a Filter's. */
export function buildSegment(core: GridCore, parts: { sets: readonly { where: readonly Node[]; intersection?: Intersection | `${Intersection}` | null }[]; sorts: readonly GridSort[]; select?: readonly string[] | null; page?: PageBy | null }): BuiltRequest<Segment> {
  if (parts.sets.length === 0) throw new GridRefusal("GridInvalidRequest", null, "a Segment needs at least one set");
  const paths = new Map<string, string>();
  const conditionSets = parts.sets.map((set, i): ConditionSet => {
    if (set.where.length === 0) throw new GridRefusal("GridInvalidRequest", null, `set ${i + 1} of the Segment has no condition`);
    const intersection = i === 0 ? null : (set.intersection ?? Intersection.Union);
    if (intersection !== null && !Object.values(Intersection).includes(intersection as Intersection)) throw new GridRefusal("GridInvalidRequest", null, `"${String(intersection)}" is not an intersection (Union, Intersect, Except)`);
    return { sort: i + 1, intersection: intersection as Intersection | null, conditionGroup: core.group(treeOf(core, allOf(...set.where)), `conditionSets[${i}].conditionGroup`, paths) };
  });
  const request: Segment = {
    conditionSets,
    orders: core.orders(parts.sorts, paths, true),
    selects: core.selects(parts.select ?? null, paths),
    ...(parts.page ? { page: parts.page } : {}),
  };
  return { request, paths };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A failure as the adapters report it: a GridRefusal stays itself; a QueryLib error body becomes a GridQueryError naming its column. */
export function queryErrorOf(error: unknown, paths: ReadonlyMap<string, string> | null): Error {
  if (error instanceof GridRefusal || error instanceof GridQueryError) return error;
  const status = isObject(error) && typeof error["status"] === "number" ? (error["status"] as number) : null;
  const bodyOf = (v: unknown): QueryLibErrorBody | null => (isObject(v) && typeof v["code"] === "string" ? (v as unknown as QueryLibErrorBody) : null);
  const body = (isObject(error) ? bodyOf(error["body"]) : null) ?? bodyOf(error);
  if (!body) return error instanceof Error ? error : new Error(String(error));
  return new GridQueryError(body, paths ? columnOfError(body, paths) : null, status);
}

/** Whether a column holds text a grid's text filters apply to. */
export const isTextual = (column: GridColumn) => column.dataType === DataType.Text || column.dataType === DataType.Enum;
