// Values arrive heterogeneous (strings, numbers, booleans, ISO dates, enum names or numbers).
// Each is normalised to a token as 2.1.5 does, trimmed, then parsed by the condition's
// DataType into the one typed value every compiler and the in-memory evaluator share.
import { Codes, fail } from "../errors/codes.js";
import { DataType } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";

/** 2.1.5's token rules: strings as they are, booleans lower-case, numbers as written, null as "". */
export function toToken(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number" || typeof value === "bigint") return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

const numberPattern = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const guidPattern = /^\{?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})\}?$/;
const isoPattern = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/** A calendar date "YYYY-MM-DD" (the value of a Date condition). */
export type CalendarDate = string;
export type TypedValue = string | number | boolean | Date | CalendarDate;

export function coerceValue(token: string, dataType: DataType, column: ColumnMember, where: string): TypedValue {
  const text = token.trim();
  const invalid = (expected: string): never => fail(Codes.InvalidFormat, `"${token}" is not ${expected}`, where);
  switch (dataType) {
    case DataType.Text:
      return text;
    case DataType.Guid: {
      const m = guidPattern.exec(text);
      return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase() : invalid("a GUID");
    }
    case DataType.Number: {
      const n = numberPattern.test(text) ? Number(text) : NaN;
      return Number.isFinite(n) ? n : invalid("a number");
    }
    case DataType.Boolean:
      return /^true$/i.test(text) ? true : /^false$/i.test(text) ? false : invalid("true or false");
    case DataType.DateTime:
      return parseInstant(text) ?? invalid("an ISO-8601 date or date-time");
    case DataType.Date: {
      const instant = parseInstant(text);
      return instant ? instant.toISOString().slice(0, 10) : invalid("an ISO-8601 date");
    }
    case DataType.Enum:
      return enumValue(text, column) ?? invalid(`a member of ${column.name}'s enum`);
  }
}

/** ISO-8601; without an offset the time is UTC (documented: the library never uses the server's zone). */
export function parseInstant(text: string): Date | null {
  const m = isoPattern.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "0", zone] = m;
  const ms = Math.round(Number(`0.${frac}`) * 1000);
  let time = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const check = new Date(time);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    time -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return new Date(time);
}

/** An enum member: the stored value exactly, else a case-insensitive name or value, else its position. */
function enumValue(text: string, column: ColumnMember): string | number | null {
  const definition = column.enumDefinition;
  if (!definition) return text;
  const entries: [string, string | number][] = Array.isArray(definition)
    ? definition.map((v) => [String(v), v as string | number])
    : Object.entries(definition as Record<string, string | number>).filter(([k]) => !/^\d+$/.test(k));
  const values = entries.map(([, v]) => v);
  const exact = values.find((v) => String(v) === text);
  if (exact !== undefined) return exact;
  const folded = text.toLowerCase();
  const byName = entries.find(([k, v]) => k.toLowerCase() === folded || String(v).toLowerCase() === folded);
  if (byName) return byName[1];
  if (/^\d+$/.test(text) && Number(text) < values.length) return values[Number(text)]!;
  return null;
}
