// Values arrive heterogeneous (strings, numbers, booleans, ISO dates, enum names or numbers).
// Each is normalised to a token as 2.1.5 does, trimmed, then parsed by the condition's
// DataType into the one typed value every compiler and the in-memory evaluator share.
import { Codes, fail } from "../errors/codes.js";
import { DataType } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";
import { calendarTime, digitsAt } from "../model/calendar.js";

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
      return wellFormedText(text, where);
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
      // Bound as text too (an Enum condition on a text column compares its text): the same refusal as Text.
      return enumValue(wellFormedText(text, where), column) ?? invalid(`a member of ${column.name}'s enum`);
  }
}

/**
 * Text every target can compare alike: no U+0000 (PostgreSQL cannot store or bind it) and no
 * lone surrogate (node-postgres and mysql2 send U+FFFD, better-sqlite3 the bytes ED A0 80: each
 * database would compare another text than the in-memory target).
 */
function wellFormedText(text: string, where: string): string {
  // With the u flag a surrogate pair is one code point, so \p{Cs} matches lone surrogates only.
  const found = /[\0\p{Cs}]/u.exec(text);
  if (found) fail(Codes.InvalidCharacter, `a text value may not contain ${found[0] === "\0" ? "U+0000" : "a lone UTF-16 surrogate"}`, where);
  return text;
}

/** ISO-8601; without an offset the time is UTC (documented: the library never uses the server's zone). */
export function parseInstant(text: string): Date | null {
  const common = parseCommonInstant(text);
  return common !== undefined ? common : parseAnyInstant(text);
}

/** The general reading: every form isoPattern allows. */
export function parseAnyInstant(text: string): Date | null {
  const m = isoPattern.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "0", zone] = m;
  const ms = Math.round(Number(`0.${frac}`) * 1000);
  let time = utcTime(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s), ms);
  if (time === null) return null;
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    time -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return new Date(time);
}

/** The instant of a UTC calendar date and time, or null when the date or time does not exist. */
function utcTime(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | null {
  const time = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(time);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  return time;
}

/**
 * The forms clients send nearly always — `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS`, with `Z`, with
 * `.sss` and `Z` (what Date.toISOString gives) — read digit by digit, a third of the regular
 * expression's cost; undefined for any other text, which parseAnyInstant reads. Both end in
 * utcTime, and a test compares them on generated texts.
 */
export function parseCommonInstant(text: string): Date | null | undefined {
  const length = text.length;
  if (length !== 10 && length !== 19 && length !== 20 && length !== 24) return undefined;
  const digits = (from: number, count: number) => digitsAt(text, from, count);
  const at = (i: number, char: string) => text.charCodeAt(i) === char.charCodeAt(0);
  const y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2);
  if (y < 0 || mo < 0 || d < 0 || !at(4, "-") || !at(7, "-")) return undefined;
  if (length === 10) return calendarTime(y, mo, d, 0, 0, 0, 0);
  const h = digits(11, 2), mi = digits(14, 2), s = digits(17, 2);
  if (h < 0 || mi < 0 || s < 0 || !at(10, "T") || !at(13, ":") || !at(16, ":")) return undefined;
  let ms = 0;
  if (length === 20 && !at(19, "Z")) return undefined;
  if (length === 24) {
    ms = digits(20, 3);
    if (ms < 0 || !at(19, ".") || !at(23, "Z")) return undefined;
  }
  return calendarTime(y, mo, d, h, mi, s, ms);
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
