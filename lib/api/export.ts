// Exports (issue #44): a Filter's or Segment's whole result, streamed in batches (pipeline/driver.ts
// runExport: one plan, each batch a seek past the last, so the server holds one batch at a time
// and a batch costs the same at any depth), and the two encodings the export route serves:
// NDJSON (a JSON object a line) and CSV (RFC 4180 by csv-stringify, with its formula escaping:
// a text cell that a spreadsheet would run as a formula, starting with = + - @ tab or CR, gets a
// leading ' (OWASP "CSV Injection")). Both are async iterables of text, so a reader that stops
// stops the export (its database reads included), and a slow reader is waited for.
import type { ObjectLiteral } from "typeorm";
import { stringify } from "csv-stringify/sync";
import { type ExportOptions, runExport } from "../pipeline/driver.js";
import type { QuerySource } from "../pipeline/source.js";
import { unguarded } from "../pipeline/unguarded.js";
import { shapeKindOf } from "../parse/parse-shapes.js";
import type { FilterInput, SegmentInput } from "../shapes/shapes.js";
import { type QpCaps, capDefaults } from "../limits/caps.js";
import { Codes, fail } from "../errors/codes.js";

export interface QpExportOptions {
  /** Rows read and handed out at a time (each batch one statement); 500 by default, at most MaxPageSize. */
  readonly batchSize?: number;
}

export const defaultExportBatch = 500;

/** The batch size and row cap of an export, checked against the caps. */
export function exportOptionsOf(options: QpExportOptions | undefined, caps: Pick<QpCaps, "maxPageSize" | "maxExportRows">): ExportOptions {
  const batchSize = options?.batchSize ?? Math.min(defaultExportBatch, caps.maxPageSize);
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) fail(Codes.InvalidPageSize, "an export's batchSize must be a whole number, at least 1", "batchSize");
  return { batchSize, maxRows: caps.maxExportRows };
}

/**
 * Every row of a Filter or Segment on a Repository, a builder or an array, in batches (unguarded:
 * an entity that requires a policy refuses it). At most MaxExportRows rows (1,000,000), or
 * CapExceeded before the first batch.
 */
export function exportRows<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], shape?: FilterInput | SegmentInput | string | null, options?: QpExportOptions): AsyncGenerator<T[], void, undefined> {
  return runExport<T, null>(source as never, { kind: shapeKindOf(shape), shape, typed: true, getQueryString: false, learnSchema: true }, unguarded, exportOptionsOf(options, capDefaults));
}

/** Rows as NDJSON: one JSON object a line, each batch one chunk. */
export async function* toNdjson(batches: AsyncIterable<readonly object[]>): AsyncGenerator<string, void, undefined> {
  for await (const batch of batches) {
    if (batch.length > 0) yield batch.map((row) => JSON.stringify(row)).join("\n") + "\n";
  }
}

export interface CsvOptions {
  /** The columns, in order (dotted paths into nested objects); by default the first row's, nested objects flattened. */
  readonly columns?: readonly string[];
}

/**
 * Rows as CSV: a header line, then a line a row. A nested object's members become dotted columns
 * (contact.email); a list (a collection) is its JSON text in one cell; dates are ISO 8601; null is
 * an empty cell. An empty result is the header alone (or nothing, without columns to name).
 */
export async function* toCsv(batches: AsyncIterable<readonly object[]>, options: CsvOptions = {}): AsyncGenerator<string, void, undefined> {
  let columns = options.columns ? [...options.columns] : null;
  let header = false;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    const flat = batch.map((row) => flatten(row as Record<string, unknown>));
    columns ??= Object.keys(flat[0]!);
    yield stringify(flat.map((row) => columns!.map((c) => cell(row[c]))), { header: false, escape_formulas: true, ...(header ? {} : { columns: columns.map(String), header: true }) });
    header = true;
  }
  if (!header && columns) yield stringify([], { columns, header: true, escape_formulas: true });
}

function flatten(row: Record<string, unknown>, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, value] of Object.entries(row)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === "object" && !(value instanceof Date) && !Array.isArray(value) && !(value instanceof Uint8Array)) flatten(value as Record<string, unknown>, name, out);
    else out[name] = value;
  }
  return out;
}

/** A value as csv-stringify writes it: text as is (escaped there), numbers as numbers, the rest as text. */
function cell(value: unknown): string | number | bigint | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return JSON.stringify(value);
}
