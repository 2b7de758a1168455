// Named parameters → the driver's positional placeholders, in text order. TypeORM's own
// conversion inlines numbers into the SQL text on SQLite; QueryLib binds every value.
import type { SqlDialect, StatementFacts } from "../dialect/sql-dialect.js";
import { BoundedCache, cacheBudgets, estimateBytes } from "../cache/bounded-cache.js";

export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * Named values from several objects, a later one winning over an earlier one (a builder's own,
 * then QueryLib's, then the page's): read where they are, never merged into a new object, which
 * for a request of many conditions cost more than the lookups.
 */
export type ParameterSources = readonly Readonly<Record<string, unknown>>[];

/** The last source that has `name` as its own member, or undefined. */
function sourceOf(sources: ParameterSources, name: string): Readonly<Record<string, unknown>> | undefined {
  for (let i = sources.length - 1; i >= 0; i--) if (Object.prototype.hasOwnProperty.call(sources[i], name)) return sources[i];
  return undefined;
}

const namedParameter = /:(\.\.\.)?([A-Za-z0-9_.]+)/g;

/** A text's parameter names in order (null where a name is spread), and its positional form per dialect. */
interface Template {
  readonly names: readonly (string | null)[];
  readonly texts: Map<string, string>;
}

/**
 * By SQL text (the same string objects as the SQL-text cache's, so a lookup reuses their hash),
 * within cacheBudgets.sqlTexts. Charged when kept for the positional texts of every dialect it
 * may get later (a placeholder "$123456" is at most four characters longer than ":x").
 */
export const templates = new BoundedCache<Template>(cacheBudgets.sqlTexts, (template, sql) =>
  estimateBytes(template.names) + 96 + dialectCount * (72 + 2 * (sql.length + 4 * template.names.length)));
const dialectCount = 3;
const templatesOwner = {};

/**
 * QueryLib's texts come back with new values (its SQL is cached per set of fragments), so their
 * placeholders are found once per text. Only when every `:name` is a plain value of this call;
 * a spread list, a raw-SQL function or a name that is no parameter goes the general way.
 */
function fromTemplate(sql: string, sources: ParameterSources, dialect: SqlDialect): Statement | null {
  let template = templates.get(templatesOwner, sql);
  if (!template) {
    const names = [...sql.matchAll(namedParameter)].map((m) => (m[1] ? null : m[2]!));
    templates.set(templatesOwner, sql, (template = { names, texts: new Map() }));
  }
  const parameters: unknown[] = new Array(template.names.length);
  for (let i = 0; i < template.names.length; i++) {
    const name = template.names[i];
    const source = name === null ? undefined : sourceOf(sources, name);
    if (source === undefined) return null;
    const value = source[name!];
    // A list bound as one value (a PostgreSQL array) is one parameter on both ways; a function is raw SQL.
    if (typeof value === "function") return null;
    parameters[i] = dialect.driverValue(value);
  }
  let text = template.texts.get(dialect.name);
  if (text === undefined) {
    let position = 0;
    text = sql.replace(namedParameter, () => dialect.placeholder(++position));
    template.texts.set(dialect.name, text);
  }
  return { sql: text, parameters };
}

export function toPositional(statementText: string, sources: ParameterSources, dialect: SqlDialect, facts?: StatementFacts): Statement {
  const sql = dialect.statement(statementText, facts);
  const fast = fromTemplate(sql, sources, dialect);
  if (fast) return fast;
  const parameters: unknown[] = [];
  const push = (value: unknown) => {
    parameters.push(dialect.driverValue(value));
    return dialect.placeholder(parameters.length);
  };
  const text = sql.replace(namedParameter, (whole, spread: string | undefined, key: string) => {
    const source = sourceOf(sources, key);
    if (source === undefined) return whole;
    const value = source[key];
    if (spread) return (value as unknown[]).map(push).join(", ");
    // TypeORM's convention for raw SQL parameters (used by hosts' own builders, never by QueryLib).
    if (typeof value === "function") return (value as () => string)();
    return push(value);
  });
  return { sql: text, parameters };
}
