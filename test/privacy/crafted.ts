// A crafted data set for the privacy block's tests (#45): every exact figure of it is a number
// that no other part of a result, trace, audit event or error holds by chance (three digits or
// more), so that a scan for them finds a leak and nothing else; and two utility groups of 100 and
// 1,000 rows. PlEntry.amount is private for every caller (QpPrivate, bounds 0..5,000).
import "reflect-metadata";
import { Column, type DataSource, Entity, PrimaryColumn } from "typeorm";
import { PolicyFeature, QpAudit, QpNoSelect, QpPrivate } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import type { Dialect } from "../support/target-list.js";

@Entity("pl_entry")
export class PlEntry {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Free-form group keys. */
  @Column({ type: "varchar", length: 20 }) label!: string;
  /** Audited (QpAudit) so that the scan of audit events has events to read. */
  @QpAudit(PolicyFeature.Aggregate) @QpNoSelect() @QpPrivate({ lower: 0, upper: 5000, granularity: 1 }) @Column({ type: "int" }) amount!: number;
}

export const amountBounds = { lower: 0, upper: 5000, granularity: 1, epsilon: 0.5 } as const;

/**
 * alpha: 137 rows of 4,321 (sum 591,977); beta: 117 rows of 9,999 (clamped to 5,000) and 36 of
 * 2,467, 153 rows (raw sum 1,258,695, clamped 673,812, clamped average 4,404); 129 groups of one
 * row of 1,234 (never released: 129 suppressed); u100 and u1000: 100 and 1,000 rows spread over
 * the bounds (the utility groups).
 */
export function craftedRows(): PlEntry[] {
  const rows: PlEntry[] = [];
  const add = (label: string, amount: number) => rows.push(Object.assign(new PlEntry(), { id: rows.length + 1, label, amount }));
  for (let i = 0; i < 137; i++) add("alpha", 4321);
  for (let i = 0; i < 117; i++) add("beta", 9999);
  for (let i = 0; i < 36; i++) add("beta", 2467);
  for (let i = 0; i < 129; i++) add(`single-${i}`, 1234);
  for (let i = 0; i < 100; i++) add("u100", (i * 2731) % 5001);
  for (let i = 0; i < 1000; i++) add("u1000", (i * 3119) % 5001);
  return rows;
}

/** The exact figures a released answer must never carry outside its noisy values. */
export const exactFigures = [137, 153, 117, 129, 419, 290, 591977, 673812, 1258695, 4321, 4404, 9999, 2467, 1234];

const opened = new Map<string, Promise<DataSource>>();
export function craftedDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = (async () => {
      const dataSource = await openIsolatedDatabase(dialect, "querylib_private_crafted", [PlEntry]);
      const rows = craftedRows();
      for (let i = 0; i < rows.length; i += 200) await dataSource.getRepository(PlEntry).insert(rows.slice(i, i + 200).map((r) => ({ ...r })));
      return dataSource;
    })()));
  }
  return pending;
}
