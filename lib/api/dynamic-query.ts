// The untyped query (docs/SHAPES.md, "Entry points"): the TypeORM builder plus QueryLib's own execution
// (bound parameters, nested rows, collections loaded without fan-out).
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";

export class DynamicQuery {
  constructor(
    /** The underlying TypeORM builder (paging as TypeORM's own limit/offset). */
    readonly builder: SelectQueryBuilder<ObjectLiteral>,
    private readonly statement: () => [string, unknown[]],
    private readonly rows: () => Promise<Record<string, unknown>[]>,
  ) {}

  /** The SQL QueryLib runs, with positional placeholders, and its bound parameters. */
  getQueryAndParameters(): [string, unknown[]] {
    return this.statement();
  }

  getRows(): Promise<Record<string, unknown>[]> {
    return this.rows();
  }
}
