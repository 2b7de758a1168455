// Executing finished statements on the source's connection (and its transaction, if any).
import type { DataSource, ObjectLiteral, QueryRunner, SelectQueryBuilder } from "typeorm";
import type { SqlDialect } from "../compile/dialects.js";
import { type Statement, toPositional } from "../compile/to-positional.js";

export interface Connection {
  readonly dataSource: DataSource;
  readonly queryRunner: QueryRunner | undefined;
  readonly dialect: SqlDialect;
}

export function statementOf(qb: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, suffix = "", extra: Record<string, unknown> = {}): Statement {
  return toPositional(qb.getQuery() + suffix, [qb.getParameters(), extra], dialect);
}

export async function runStatement(connection: Connection, statement: Statement): Promise<Record<string, unknown>[]> {
  const rows = await connection.dataSource.query(statement.sql, statement.parameters as unknown[], connection.queryRunner);
  return rows as Record<string, unknown>[];
}

/** The text returned as queryString: the SQL, then its bound parameters. */
export function describeStatement(statement: Statement): string {
  return `${statement.sql}\n-- parameters: ${JSON.stringify(statement.parameters)}`;
}
