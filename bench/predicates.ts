// One small description of a condition tree on Customer, rendered three ways: as the
// QueryLib ConditionGroup JSON, as a hand-written TypeORM Brackets tree (what a competent user
// writes with named parameters), and as a nestjs-paginate `filter=` expression. Used by W7 and
// by the conditions growth curve, where writing 50 conditions three times by hand would invite
// mismatches. Only root scalar columns and operators all three can express are supported.
import { Brackets, type WhereExpressionBuilder } from "typeorm";
import type { Dialect } from "./db.js";

export type DataType = "Text" | "Number" | "DateTime" | "Boolean";
export type Op =
  | "Equal"
  | "NotEqual"
  | "IContains"
  | "IStartsWith"
  | "In"
  | "GreaterThan"
  | "GreaterThanOrEqual"
  | "LessThan"
  | "LessThanOrEqual"
  | "Between"
  | "IsNotNull";

export interface Cond {
  field: string;
  dataType: DataType;
  operator: Op;
  values: Array<string | number | boolean>;
}

export interface Group {
  connector: "And" | "Or";
  conditions: Cond[];
  groups: Group[];
}

export function countConditions(group: Group): number {
  return group.conditions.length + group.groups.reduce((sum, g) => sum + countConditions(g), 0);
}

// ---------------------------------------------------------------------------------------------
// QueryLib JSON (SPEC.md shapes, camelCase members, enum members by name)

export function toQueryLibGroup(group: Group): Record<string, unknown> {
  return {
    connector: group.connector,
    conditions: group.conditions.map((c, i) => ({
      sort: i + 1,
      field: c.field,
      dataType: c.dataType,
      operator: c.operator,
      values: c.values,
    })),
    subConditionGroups: group.groups.map((g, i) => ({ sort: i + 1, ...toQueryLibGroup(g) })),
  };
}

// ---------------------------------------------------------------------------------------------
// TypeORM

/**
 * A case-insensitive LIKE as a user of each database writes it. MariaDB's LIKE follows the
 * column's collation (utf8mb4_general_ci), which also ignores accents ("é" matches "e"): a user
 * who wants case alone ignored lowers both sides and compares them bytewise.
 */
function insensitiveLike(col: string, p: string, dialect: Dialect): string {
  if (dialect === "postgres") return `${col} ILIKE :${p}`;
  if (dialect === "mariadb") return `LOWER(${col}) LIKE :${p} COLLATE utf8mb4_bin`;
  return `${col} LIKE :${p}`;
}

const likeValue = (pattern: string, dialect: Dialect) => (dialect === "mariadb" ? pattern.toLowerCase() : pattern);

function typeormValue(c: Cond, value: string | number | boolean): unknown {
  switch (c.dataType) {
    case "DateTime":
      return new Date(String(value));
    case "Number":
      return Number(value);
    case "Boolean":
      return value === true || value === "true";
    default:
      return value;
  }
}

/**
 * Adds `group` to `qb` as nested Brackets. Parameter names come from `prefix` plus a running
 * number, as a user would name them (`p0`, `p1`, …).
 */
export function applyTypeormGroup(
  qb: WhereExpressionBuilder,
  group: Group,
  alias: string,
  dialect: Dialect,
  prefix = "p",
): void {
  let n = 0;
  const next = () => `${prefix}${n++}`;
  const render = (target: WhereExpressionBuilder, g: Group) => {
    let first = true;
    const add = (clause: string | Brackets, params?: Record<string, unknown>) => {
      // (The overloads take either a string or Brackets; both go through the same code path.)
      const c = clause as string;
      if (first) target.where(c, params);
      else if (g.connector === "And") target.andWhere(c, params);
      else target.orWhere(c, params);
      first = false;
    };
    for (const c of g.conditions) {
      const col = `${alias}.${c.field}`;
      const p = next();
      const v = c.values.map((value) => typeormValue(c, value));
      switch (c.operator) {
        case "Equal":
          add(`${col} = :${p}`, { [p]: v[0] });
          break;
        case "NotEqual":
          add(`${col} <> :${p}`, { [p]: v[0] });
          break;
        case "IContains":
          add(insensitiveLike(col, p, dialect), { [p]: likeValue(`%${v[0]}%`, dialect) });
          break;
        case "IStartsWith":
          add(insensitiveLike(col, p, dialect), { [p]: likeValue(`${v[0]}%`, dialect) });
          break;
        case "In":
          add(`${col} IN (:...${p})`, { [p]: v });
          break;
        case "GreaterThan":
          add(`${col} > :${p}`, { [p]: v[0] });
          break;
        case "GreaterThanOrEqual":
          add(`${col} >= :${p}`, { [p]: v[0] });
          break;
        case "LessThan":
          add(`${col} < :${p}`, { [p]: v[0] });
          break;
        case "LessThanOrEqual":
          add(`${col} <= :${p}`, { [p]: v[0] });
          break;
        case "Between": {
          const q = next();
          add(`${col} BETWEEN :${p} AND :${q}`, { [p]: v[0], [q]: v[1] });
          break;
        }
        case "IsNotNull":
          add(`${col} IS NOT NULL`);
          break;
      }
    }
    for (const sub of g.groups) add(new Brackets((inner) => render(inner, sub)));
  };
  qb.andWhere(new Brackets((inner) => render(inner, group)));
}

// ---------------------------------------------------------------------------------------------
// nestjs-paginate `filter=` expression

function paginateValue(c: Cond, value: string | number | boolean, dialect: Dialect): string {
  // nestjs-paginate passes values through as strings (only ISO dates and `number` columns are
  // converted); SQLite stores booleans as 0/1, so a SQLite user has to send 1/0.
  if (c.dataType === "Boolean") {
    const truthy = value === true || value === "true";
    return dialect === "postgres" ? String(truthy) : truthy ? "1" : "0"; // SQLite and MariaDB store booleans as 0/1
  }
  const text = String(value);
  return /[\s()"',]/.test(text) ? `"${text.replace(/(["\\])/g, "\\$1")}"` : text;
}

/** Every column used in the tree, for `filterableColumns`. */
export function fieldsOf(group: Group, into = new Set<string>()): Set<string> {
  for (const c of group.conditions) into.add(c.field);
  for (const g of group.groups) fieldsOf(g, into);
  return into;
}

export function toPaginateExpression(group: Group, dialect: Dialect): string {
  const terms: string[] = [];
  for (const c of group.conditions) {
    const v = (i: number) => paginateValue(c, c.values[i], dialect);
    switch (c.operator) {
      case "Equal":
        terms.push(`${c.field}=$eq:${v(0)}`);
        break;
      case "NotEqual":
        terms.push(`${c.field}=$not:$eq:${v(0)}`);
        break;
      case "IContains":
        terms.push(`${c.field}=$ilike:${v(0)}`);
        break;
      case "IStartsWith":
        terms.push(`${c.field}=$sw:${v(0)}`);
        break;
      case "In":
        // $in splits on commas, so values must not contain one (the generators ensure that).
        terms.push(`${c.field}=$in:${c.values.map((value) => String(value)).join(",")}`);
        break;
      case "GreaterThan":
        terms.push(`${c.field}=$gt:${v(0)}`);
        break;
      case "GreaterThanOrEqual":
        terms.push(`${c.field}=$gte:${v(0)}`);
        break;
      case "LessThan":
        terms.push(`${c.field}=$lt:${v(0)}`);
        break;
      case "LessThanOrEqual":
        terms.push(`${c.field}=$lte:${v(0)}`);
        break;
      case "Between":
        terms.push(`${c.field}=$btw:${String(c.values[0])},${String(c.values[1])}`);
        break;
      case "IsNotNull":
        terms.push(`${c.field}=$not:$null`);
        break;
    }
  }
  for (const g of group.groups) terms.push(`(${toPaginateExpression(g, dialect)})`);
  return terms.join(group.connector === "And" ? " AND " : " OR ");
}

// ---------------------------------------------------------------------------------------------
// Generated trees

const DATE_LOW = "2020-06-01T00:00:00.000Z";
const DATE_HIGH = "2025-06-30T00:00:00.000Z";

/**
 * W7: a 50-condition filter nested three levels deep, the kind a filter UI produces:
 * AND of (10 name prefixes ORed), (8 range/sanity conditions), (an OR of two 6-condition AND
 * profiles plus 3 more), and (an OR of 17 loose conditions). Selective but never empty.
 */
export function w7Group(): Group {
  const prefixes = ["a", "b", "c", "d", "e", "j", "m", "o", "s", "z"];
  const names: Group = {
    connector: "Or",
    conditions: prefixes.map((p) => ({ field: "name", dataType: "Text", operator: "IStartsWith", values: [p] })),
    groups: [],
  };
  const sanity: Group = {
    connector: "And",
    conditions: [
      { field: "createdAt", dataType: "DateTime", operator: "Between", values: [DATE_LOW, DATE_HIGH] },
      { field: "balance", dataType: "Number", operator: "GreaterThan", values: [-40000] },
      { field: "balance", dataType: "Number", operator: "LessThan", values: [480000] },
      { field: "id", dataType: "Number", operator: "GreaterThan", values: [0] },
      { field: "tier", dataType: "Text", operator: "In", values: ["Bronze", "Silver", "Gold"] },
      { field: "externalId", dataType: "Text", operator: "IsNotNull", values: [] },
      { field: "name", dataType: "Text", operator: "NotEqual", values: ["nobody at all"] },
      { field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [1000000] },
    ],
    groups: [],
  };
  const profile = (tier: string, minScore: number, minBalance: number): Group => ({
    connector: "And",
    conditions: [
      { field: "tier", dataType: "Text", operator: "Equal", values: [tier] },
      { field: "score", dataType: "Number", operator: "GreaterThanOrEqual", values: [minScore] },
      { field: "balance", dataType: "Number", operator: "GreaterThan", values: [minBalance] },
      { field: "isActive", dataType: "Boolean", operator: "Equal", values: [true] },
      { field: "createdAt", dataType: "DateTime", operator: "GreaterThanOrEqual", values: ["2020-03-01T00:00:00.000Z"] },
      { field: "score", dataType: "Number", operator: "LessThanOrEqual", values: [100] },
    ],
    groups: [],
  });
  const profiles: Group = {
    connector: "Or",
    conditions: [
      { field: "tier", dataType: "Text", operator: "Equal", values: ["Bronze"] },
      { field: "score", dataType: "Number", operator: "Between", values: [80, 100] },
      { field: "notes", dataType: "Text", operator: "IContains", values: ["email"] },
    ],
    groups: [profile("Gold", 20, 1000), profile("Silver", 40, 50000)],
  };
  const loose: Group = {
    connector: "Or",
    conditions: [
      ...[0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55].map(
        (s): Cond => ({ field: "score", dataType: "Number", operator: "NotEqual", values: [s] }),
      ),
      { field: "balance", dataType: "Number", operator: "GreaterThanOrEqual", values: [0] },
      { field: "createdAt", dataType: "DateTime", operator: "LessThan", values: ["2024-01-01T00:00:00.000Z"] },
      { field: "isActive", dataType: "Boolean", operator: "Equal", values: [false] },
      { field: "notes", dataType: "Text", operator: "IsNotNull", values: [] },
      { field: "tier", dataType: "Text", operator: "NotEqual", values: ["Gold"] },
    ],
    groups: [],
  };
  const root: Group = { connector: "And", conditions: [], groups: [names, sanity, profiles, loose] };
  const total = countConditions(root);
  if (total !== 50) throw new Error(`w7Group has ${total} conditions, expected 50`);
  return root;
}

/** The first `n` (1 → 50) of a fixed list of cheap, mostly-true conditions, ANDed. */
export function growthGroup(n: number): Group {
  const pool: Cond[] = [];
  for (let i = 0; pool.length < 50; i++) {
    switch (i % 5) {
      case 0:
        pool.push({ field: "balance", dataType: "Number", operator: "GreaterThan", values: [-50001 - i] });
        break;
      case 1:
        pool.push({ field: "createdAt", dataType: "DateTime", operator: "GreaterThanOrEqual", values: ["2019-01-01T00:00:00.000Z"] });
        break;
      case 2:
        pool.push({ field: "name", dataType: "Text", operator: "NotEqual", values: [`nobody ${i}`] });
        break;
      case 3:
        pool.push({ field: "id", dataType: "Number", operator: "LessThan", values: [10_000_000 + i] });
        break;
      case 4:
        pool.push({ field: "tier", dataType: "Text", operator: "In", values: ["Bronze", "Silver", "Gold"] });
        break;
    }
  }
  return { connector: "And", conditions: pool.slice(0, n), groups: [] };
}
