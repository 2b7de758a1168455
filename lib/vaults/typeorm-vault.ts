// querylib/typeorm-vault: tokens in a relational table (SQLite, PostgreSQL, MariaDB/MySQL)
// through TypeORM. The table `querylib_token` has a unique (scope, digest) constraint; add
// `QpTypeOrmTokenVault.entities` to the DataSource and create the table with QueryLibMigrations
// (or synchronize). Get-or-create is atomic through that constraint.
import { Column, Entity, Index, PrimaryGeneratedColumn, type DataSource } from "typeorm";
import type { IQpTokenVault } from "../transform/vault.js";
import { newToken, vaultDigest } from "../transform/vault.js";
import { HmacSha256 } from "../transform/hmac-sha256.js";
import { checkDigestKey } from "./digest-key.js";
import { dialectOf } from "../dialect/dialect-of.js";

@Entity("querylib_token")
@Index("UQ_querylib_token_scope_digest", ["scope", "digest"], { unique: true })
export class QpTokenRecord {
  @PrimaryGeneratedColumn() id!: number;
  @Column({ type: "varchar", length: 200 }) scope!: string;
  @Column({ type: "varchar", length: 64 }) digest!: string;
  @Column({ type: "varchar", length: 32 }) token!: string;
}

export interface QpTypeOrmTokenVaultOptions {
  /** A secret of at least 16 characters, the same in every process sharing the vault. */
  digestKey: string;
}

export class QpTypeOrmTokenVault implements IQpTokenVault {
  static readonly entities = [QpTokenRecord];
  private readonly digestKey: HmacSha256;
  /** Statements sent: one per page and scope on SQLite and PostgreSQL, two on MariaDB/MySQL. */
  roundTrips = 0;

  constructor(private readonly dataSource: DataSource, options: QpTypeOrmTokenVaultOptions) {
    this.digestKey = new HmacSha256(checkDigestKey("QpTypeOrmTokenVault", options));
  }

  async tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const distinct = [...new Set(values)];
    if (distinct.length === 0) return new Map();
    const digests = distinct.map((v) => vaultDigest(this.digestKey, scope, v));
    const byDigest = new Map<string, string>();
    const dialect = dialectOf(this.dataSource);
    const quote = (id: string) => this.dataSource.driver.escape(id);
    const table = quote(this.dataSource.getMetadata(QpTokenRecord).tableName);
    const [s, d, t] = ["scope", "digest", "token"].map(quote);
    // On the primary, explicitly, also when the DataSource reads from replicas: the SELECT after
    // INSERT IGNORE must see the tokens just written, which a replica may not have yet.
    const primary = this.dataSource.createQueryRunner("master");
    try {
      if (!dialect.upsertReturning) {
        const rows = distinct.map(() => "(?, ?, ?)").join(", ");
        this.roundTrips += 2;
        await this.dataSource.query(`INSERT IGNORE INTO ${table} (${s}, ${d}, ${t}) VALUES ${rows}`, digests.flatMap((digest) => [scope, digest, newToken()]), primary);
        const found: { digest: string; token: string }[] = await this.dataSource.query(
          `SELECT ${d} AS digest, ${t} AS token FROM ${table} WHERE ${s} = ? AND ${d} IN (${digests.map(() => "?").join(", ")})`, [scope, ...digests], primary);
        for (const row of found) byDigest.set(row.digest, row.token);
      } else {
        const rows = digests.map((_, i) => `(${dialect.placeholder(i * 3 + 1)}, ${dialect.placeholder(i * 3 + 2)}, ${dialect.placeholder(i * 3 + 3)})`).join(", ");
        // The no-op update makes RETURNING give back existing rows too: one statement, one round trip.
        this.roundTrips++;
        const found: { digest: string; token: string }[] = await this.dataSource.query(
          `INSERT INTO ${table} (${s}, ${d}, ${t}) VALUES ${rows} ON CONFLICT (${s}, ${d}) DO UPDATE SET ${s} = excluded.${s} RETURNING ${d} AS digest, ${t} AS token`,
          digests.flatMap((digest) => [scope, digest, newToken()]),
          primary,
        );
        for (const row of found) byDigest.set(row.digest, row.token);
      }
    } finally {
      await primary.release();
    }
    const tokens = new Map<string, string>();
    distinct.forEach((value, i) => {
      const token = byDigest.get(digests[i]!);
      if (!token) throw new Error("the token table returned no token for a value");
      tokens.set(value, token);
    });
    return tokens;
  }
}
