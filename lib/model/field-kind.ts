// What kind of value a column holds, from TypeORM's column type. Decides which DataTypes a
// condition may use on it and how values are coerced and compared.
import { DataType } from "../shapes/enums.js";

export type FieldKind = "text" | "uuid" | "number" | "boolean" | "datetime" | "date" | "enum" | "other";

/** The DataType a condition on a field of each kind takes; null: none (a column of another type). */
export const dataTypeOfKind: Readonly<Record<FieldKind, DataType | null>> = {
  text: DataType.Text, uuid: DataType.Guid, number: DataType.Number, boolean: DataType.Boolean,
  datetime: DataType.DateTime, date: DataType.Date, enum: DataType.Enum, other: null,
};

const byTypeName: Record<string, FieldKind> = {};
const assign = (kind: FieldKind, names: string) => names.split(" ").forEach((n) => (byTypeName[n] = kind));
assign("number", "int integer int2 int4 int8 smallint mediumint bigint tinyint decimal numeric dec float float4 float8 double real money unsigned_big_int double_precision");
assign("text", "varchar text char nchar nvarchar character character_varying varying_character native_character tinytext mediumtext longtext citext clob string");
assign("uuid", "uuid uniqueidentifier");
assign("boolean", "boolean bool");
assign("datetime", "datetime datetime2 datetimeoffset timestamp timestamptz timestamp_with_time_zone timestamp_without_time_zone timestamp_with_local_time_zone");
assign("date", "date");
assign("enum", "enum simple-enum");

export function fieldKindOf(type: unknown): FieldKind {
  if (type === Number) return "number";
  if (type === String) return "text";
  if (type === Boolean) return "boolean";
  if (type === Date) return "datetime";
  if (typeof type !== "string") return "other";
  return byTypeName[type.toLowerCase().replaceAll(" ", "_")] ?? "other";
}

/** Kinds a text value can be stored in: where a text-emitting transform may write (transform rule 2). */
export const textAssignableKinds: readonly FieldKind[] = ["text", "uuid", "enum", "other"];
