// Named parameters → the driver's positional placeholders, in text order. TypeORM's own
// conversion inlines numbers into the SQL text on SQLite; QueryLib binds every value.
import type { SqlDialect } from "./dialects.js";

export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

const namedParameter = /:(\.\.\.)?([A-Za-z0-9_.]+)/g;

export function toPositional(sql: string, named: Readonly<Record<string, unknown>>, dialect: SqlDialect): Statement {
  const parameters: unknown[] = [];
  const push = (value: unknown) => {
    parameters.push(driverValue(value, dialect));
    return dialect.placeholder(parameters.length);
  };
  const text = sql.replace(namedParameter, (whole, spread: string | undefined, key: string) => {
    if (!Object.prototype.hasOwnProperty.call(named, key)) return whole;
    const value = named[key];
    if (spread) return (value as unknown[]).map(push).join(", ");
    // TypeORM's convention for raw SQL parameters (used by hosts' own builders, never by QueryLib).
    if (typeof value === "function") return (value as () => string)();
    return push(value);
  });
  return { sql: text, parameters };
}

/** SQLite has no boolean or date types: store them the way TypeORM does. */
function driverValue(value: unknown, dialect: SqlDialect): unknown {
  if (dialect.name !== "sqlite") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString().replace("T", " ").replace("Z", "");
  return value;
}
