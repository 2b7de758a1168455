// Observing a decision from the outside: what a guarded query does with a field (on the
// in-memory rows of ruleData()), compared with the raw values of the oracle rows. Deny on Select
// = the field is dropped (Convenience) or the query is refused; Mask = every non-null value is
// replaced by one mask text; Allow = the raw values come back.
import assert from "node:assert/strict";
import { PolicyErrorCode, PolicyException, applyPolicy, type QpPolicyContext } from "../../lib/index.js";
import { oracleData, ruleData } from "./domain.js";
import type { Guarded } from "./support.js";

type Row = Record<string, unknown>;

/** The value at a dotted path of an object (null through a missing reference). */
export function valueAt(row: unknown, path: string): unknown {
  let value: unknown = row;
  for (const segment of path.split(".")) {
    if (value === null || value === undefined) return null;
    value = (value as Row)[segment];
  }
  return value === undefined ? undefined : value;
}

export function hasPath(row: unknown, path: string): boolean {
  let value: unknown = row;
  for (const segment of path.split(".")) {
    if (value === null || typeof value !== "object" || !(segment in (value as Row))) return false;
    value = (value as Row)[segment];
  }
  return true;
}

/** The raw value of an employee at a public path (the alias "nickname" reads the member nick). */
export function rawAt(id: number, publicPath: string): unknown {
  const employee = oracleData.employees[id - 1]!;
  return valueAt(employee, publicPath.replace(/(^|\.)nickname$/, "$1nick"));
}

/**
 * "Deny", "Allow" or "Mask:<text>" for selecting `path` from staff (rows come back in id order).
 * Any other outcome fails the test with the values seen.
 */
export async function seenOnSelect(context: QpPolicyContext, path: string): Promise<string> {
  let result: Guarded;
  try {
    result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ selects: [path] } as never)) as unknown as Guarded;
  } catch (error) {
    if (error instanceof PolicyException && (error.errorCode === PolicyErrorCode.AllSelectsDenied || error.errorCode === PolicyErrorCode.FieldDeniedForSelect)) return "Deny";
    throw error;
  }
  assert.equal(result.data.length, 30);
  if (result.data.every((row) => !hasPath(row, path))) return "Deny";
  const values = result.data.map((row) => valueAt(row, path));
  const raw = oracleData.employees.map((e) => rawAt(e.id, path));
  if (values.every((v, i) => sameValue(v, raw[i]))) return "Allow";
  const masked = new Set(values.filter((v, i) => raw[i] !== null && raw[i] !== undefined).map((v) => String(v)));
  const nullsKept = values.every((v, i) => (raw[i] === null || raw[i] === undefined) === (v === null || v === undefined));
  if (masked.size === 1 && nullsKept) return `Mask:${[...masked][0]}`;
  return `Other:${JSON.stringify(values.slice(0, 4))}`;
}

function sameValue(a: unknown, b: unknown): boolean {
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof b === "number" || typeof b === "boolean") return a === b || Number(a) === Number(b);
  return String(a) === String(b);
}

/** "Deny" when a condition on `path` is refused with FieldDeniedForWhere, else "Allow" (rows checked). */
export async function seenOnWhere(context: QpPolicyContext, path: string, value: string | number): Promise<string> {
  const condition = { sort: 1, field: path, operator: "Equal", values: [value], ...(typeof value === "number" ? { dataType: "Number" } : {}) };
  try {
    const result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ conditionGroup: { connector: "And", conditions: [condition] }, selects: ["id"] } as never)) as unknown as Guarded;
    const expected = oracleData.employees.filter((e) => String(rawAt(e.id, path)) === String(value)).map((e) => e.id);
    assert.deepEqual(result.data.map((r) => Number(r.id)), expected, `rows where ${path} = ${value}`);
    return "Allow";
  } catch (error) {
    if (error instanceof PolicyException && error.errorCode === PolicyErrorCode.FieldDeniedForWhere) return "Deny";
    throw error;
  }
}
