// The grid adapters' shared core (querylib/client): no grid here, and no server or Node
// dependency. It reads a schema response (POST {admin}/schema) once, and turns what a grid asks
// for into QueryLib's shapes: a column model any grid can be configured from, conditions typed by
// each field's DataType, orders, group keys, aggregates and pages. What the schema says this
// caller cannot use is refused here, before the round trip, with a GridRefusal naming the column;
// a QueryLib error coming back names its column again through the JSON paths recorded while the
// request was built (columnOfError). Each grid's adapter (ag-grid.ts, …) maps its own vocabulary
// onto the grid-neutral `GridPredicate`s below; the defaults of each grid are stated where it does.
import { Aggregator, Connector, DataType, Direction, Operator } from "../../shapes/enums.js";
import type { AggregateBy, Condition, ConditionGroup, Filter, OrderBy, PageBy, Summary } from "../../shapes/shapes.js";
import { LogicException } from "../../errors/logic-exception.js";
import { operators } from "../../shapes/operator-table.js";

// ---- the schema response, as far as a grid reads it (lib/admin/admin.ts SchemaField) ----------

/** One field of a schema response: the members a grid reads (the server sends more). */
export interface GridSchemaField {
  readonly path: string;
  readonly label?: string | null;
  readonly description?: string | null;
  readonly group?: string | null;
  readonly order?: number | null;
  readonly dataType: DataType | `${DataType}` | null;
  readonly operators: readonly (Operator | `${Operator}`)[];
  readonly allowedValues?: readonly string[] | null;
  /** Where, Select, Order, Group, Aggregate, Segment: what the caller may do with the field. */
  readonly features: readonly string[];
  readonly masked?: boolean;
  /** What the caller's values go through on output ("Mask:Email", "Generalize:Bucket", …). */
  readonly transforms?: readonly string[];
  readonly inference?: { readonly maxInValues: number | null; readonly summable: boolean } | null;
  readonly private?: { readonly aggregators: readonly string[] } | null;
}
export interface GridSchema {
  readonly entity: string;
  readonly fields: readonly GridSchemaField[];
}

// ---- refusals ---------------------------------------------------------------------------------

/** Why the core refused a grid's request before sending it. */
export type GridRefusalCode =
  | "GridColumnUnknown"
  | "GridFilterNotAllowed"
  | "GridOperatorNotAllowed"
  | "GridSortNotAllowed"
  | "GridGroupNotAllowed"
  | "GridAggregateNotAllowed"
  | "GridSelectNotAllowed"
  | "GridInvalidValue"
  | "GridUnsupportedFilter"
  | "GridInvalidRequest";

/**
 * A grid request the schema says this caller cannot make (or that the core cannot translate
 * faithfully), refused before the round trip. A LogicException, so a server translating a grid's
 * body (querylib/nest's grid route) answers it as any bad input: 400 with its code and path.
 */
export class GridRefusal extends LogicException {
  /** The grid column the refusal is about (null when it is about the request as a whole). */
  readonly column: string | null;
  constructor(code: GridRefusalCode, column: string | null, message: string, path?: string) {
    super(code, `${code}: ${column !== null ? `column "${column}": ` : ""}${message}`, path);
    this.name = "GridRefusal";
    this.column = column;
  }
}

// ---- columns ----------------------------------------------------------------------------------

/** A grid-neutral column, built from one schema field. Its id is the field's path. */
export interface GridColumn {
  readonly id: string;
  readonly label: string;
  readonly description: string | null;
  readonly group: string | null;
  readonly dataType: DataType;
  /** The operators the caller may use on the field (empty when it may not filter by it). */
  readonly operators: ReadonlySet<Operator>;
  readonly allowedValues: readonly string[] | null;
  readonly filterable: boolean;
  readonly selectable: boolean;
  readonly sortable: boolean;
  readonly groupable: boolean;
  /** The aggregators the caller may apply (empty when none). */
  readonly aggregators: readonly Aggregator[];
  /** Output transforms ("Mask:Email", …); a grid marks such a column. */
  readonly transforms: readonly string[];
  readonly transformed: boolean;
  /** Under inference protection, the most values one request may test against the field. */
  readonly maxInValues: number | null;
  /** Whether text comparisons are case-sensitive (see GridCoreOptions.caseSensitive). */
  readonly caseSensitive: boolean;
  /** Whether a grid's "in range" includes its bounds (see GridCoreOptions.inRangeInclusive). */
  readonly inRangeInclusive: boolean;
}

const dataTypes = new Set<string>(Object.values(DataType));
const operatorNames = new Set<string>(Object.values(Operator));
const ordered = new Set<DataType>([DataType.Number, DataType.Date, DataType.DateTime]);

/** The aggregators a field's DataType takes (docs/SHAPES.md, Summary). */
function aggregatorsOf(dataType: DataType): Aggregator[] {
  const any = [Aggregator.Count, Aggregator.CountDistinct, Aggregator.FirstOrDefault, Aggregator.LastOrDefault];
  if (dataType === DataType.Number) return [...any, Aggregator.Sumation, Aggregator.Average, Aggregator.Minimum, Aggregator.Maximum];
  if (ordered.has(dataType)) return [...any, Aggregator.Minimum, Aggregator.Maximum];
  return any;
}

export interface GridCoreOptions {
  /**
   * The caller's IANA time zone (e.g. "Europe/Berlin", "UTC"): a date-time a grid sends without an
   * offset ("2024-05-24 13:30:00") is that wall-clock time there. Required: the core never guesses
   * it from the machine it runs on (a server translating a grid's body would use its own).
   */
  readonly timeZone: string;
  /**
   * Text columns compared case-sensitively (the grids' text filters are case-insensitive by
   * default). Enum and Guid columns always are (QueryLib folds case on Text only), and so is a text
   * column on which the caller may use no folding operator but an exact one.
   */
  readonly caseSensitive?: readonly string[];
  /** Columns whose "in range" includes its bounds (AG Grid's `inRangeInclusive`; AG's default excludes them). */
  readonly inRangeInclusive?: readonly string[];
  /** The column that breaks ties so that pages are stable; default "id" when the schema offers it sortable. */
  readonly rowId?: string | null;
}

function checkTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== "string" || timeZone === "") throw new GridRefusal("GridInvalidRequest", null, "timeZone must name an IANA time zone, e.g. \"UTC\"");
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw new GridRefusal("GridInvalidRequest", null, `timeZone "${timeZone}" is not a time zone`);
  }
  return timeZone;
}

// ---- what a grid asks for, grid-neutral -------------------------------------------------------

/** A value as a grid sends it: text from an input, a number, a boolean; null for "blank". */
export type GridValue = string | number | boolean | Date | null;

/** A predicate on one column; each adapter maps its grid's filter options onto these. */
export type GridPredicate =
  /** `caseSensitive` overrides the column's (Refine's `containss`, say); absent, the column decides. */
  | { readonly kind: "compare"; readonly column: string; readonly test: "equals" | "notEqual" | "contains" | "notContains" | "startsWith" | "endsWith"; readonly value: GridValue; readonly caseSensitive?: boolean }
  | { readonly kind: "order"; readonly column: string; readonly test: "lessThan" | "lessThanOrEqual" | "greaterThan" | "greaterThanOrEqual"; readonly value: GridValue }
  /** `inclusive` overrides the column's; `negated`: outside the range (NotBetween when inclusive). */
  | { readonly kind: "range"; readonly column: string; readonly from: GridValue; readonly to: GridValue; readonly inclusive?: boolean; readonly negated?: boolean }
  | { readonly kind: "blank"; readonly column: string; readonly blank: boolean }
  | { readonly kind: "set"; readonly column: string; readonly values: readonly GridValue[]; readonly negated?: boolean }
  | { readonly kind: "boolean"; readonly column: string; readonly value: boolean }
  /** A group key the server returned (a drill-down): exact Equal, IsNull for the blank group. */
  | { readonly kind: "key"; readonly column: string; readonly value: GridValue }
  | { readonly kind: "group"; readonly connector: "AND" | "OR"; readonly parts: readonly GridPredicate[] };

export interface GridSort { readonly column: string; readonly direction: "asc" | "desc" }

/** Where each part of a built request came from: a JSON path prefix → the grid column. */
export type GridPaths = ReadonlyMap<string, string>;

export interface BuiltRequest<T> {
  readonly request: T;
  /** JSON path prefixes of the request (e.g. "conditionGroup.subConditionGroups[0].conditions[1]") → column. */
  readonly paths: GridPaths;
}

/** A page covering rows [startRow, endRow): the page to ask for, and which of its rows to keep. */
export interface GridPage { readonly page: PageBy; readonly skip: number; readonly take: number }

/** What a grid's aggregate asks for: an aggregator on a column (null: count rows). */
export interface GridAggregate { readonly column: string | null; readonly aggregator: Aggregator; readonly alias: string }

// ---- time zones -------------------------------------------------------------------------------

const localDateTime = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?$/;
const withOffset = /(Z|[+-]\d{2}:?\d{2})$/i;

/** The offset (ms) of `timeZone` from UTC at the instant `utcMs`. */
function offsetAt(timeZone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).formatToParts(new Date(utcMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in `timeZone` ("2024-05-24 13:30:00" in Europe/Berlin →
 * 2024-05-24T11:30:00.000Z). A time in a daylight-saving gap moves forward by the gap, and one in
 * the repeated hour is its first occurrence, as a browser's Date does for its own zone.
 */
export function instantInZone(text: string, timeZone: string): Date | null {
  const m = localDateTime.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s, ms] = [m[1], m[2], m[3], m[4] ?? "0", m[5] ?? "0", m[6] ?? "0", (m[7] ?? "0").padEnd(3, "0")].map(Number) as number[];
  const wall = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
  const check = new Date(wall);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo! - 1 || check.getUTCDate() !== d || h! > 23 || mi! > 59 || s! > 59) return null;
  // Two passes find the offset in force at the instant itself (it may differ from the offset at the wall time read as UTC).
  const first = wall - offsetAt(timeZone, wall);
  const second = wall - offsetAt(timeZone, first);
  return new Date(offsetAt(timeZone, second) === offsetAt(timeZone, first) ? second : Math.max(first, second));
}

// ---- the core ---------------------------------------------------------------------------------

const featureSet = (field: GridSchemaField) => new Set(field.features);

/**
 * The grid-neutral core: built once from a schema response (and rebuilt when the caller's schema
 * changes). Adapters call it; it never calls a grid.
 */
export class GridCore {
  readonly entity: string;
  readonly timeZone: string;
  readonly columns: readonly GridColumn[];
  /** The column that breaks ties in every Filter's order (null when the schema offers none). */
  readonly rowId: string | null;
  private readonly byId = new Map<string, GridColumn>();

  constructor(schema: GridSchema, options: GridCoreOptions) {
    if (schema === null || typeof schema !== "object" || !Array.isArray(schema.fields)) throw new GridRefusal("GridInvalidRequest", null, "the schema must be a schema response { entity, fields }");
    this.entity = schema.entity;
    this.timeZone = checkTimeZone(options.timeZone);
    const caseSensitive = new Set(options.caseSensitive ?? []);
    const inclusive = new Set(options.inRangeInclusive ?? []);
    const columns: GridColumn[] = [];
    for (const field of schema.fields) {
      if (typeof field.dataType !== "string" || !dataTypes.has(field.dataType)) continue; // a navigation, not a column
      const dataType = field.dataType as DataType;
      const features = featureSet(field);
      const ops = new Set((field.operators as readonly string[]).filter((op) => operatorNames.has(op)) as Operator[]);
      let aggregators = features.has("Aggregate") ? aggregatorsOf(dataType) : [];
      if (field.private) aggregators = aggregators.filter((a) => field.private!.aggregators.includes(a));
      if (field.inference && !field.inference.summable) aggregators = aggregators.filter((a) => a !== Aggregator.Sumation && a !== Aggregator.Average);
      const column: GridColumn = {
        id: field.path,
        label: field.label || field.path,
        description: field.description ?? null,
        group: field.group ?? null,
        dataType,
        operators: features.has("Where") ? ops : new Set(),
        allowedValues: field.allowedValues ?? null,
        filterable: features.has("Where") && ops.size > 0,
        selectable: features.has("Select"),
        sortable: features.has("Order"),
        groupable: features.has("Group"),
        aggregators,
        transforms: [...(field.transforms ?? [])],
        transformed: (field.transforms ?? []).length > 0 || field.masked === true,
        maxInValues: field.inference?.maxInValues ?? null,
        // A text column is compared exactly when it is listed, or when the caller may use no folding operator on it but an exact one (a tokenized id allowing Equal and In only).
        caseSensitive: dataType !== DataType.Text || caseSensitive.has(field.path) || (![...ops].some((op) => operators[op].caseInsensitive) && [...ops].some((op) => !operators[op].noValue)),
        inRangeInclusive: inclusive.has(field.path),
      };
      columns.push(column);
      this.byId.set(column.id, column);
    }
    this.columns = columns;
    const rowId = options.rowId === undefined ? "id" : options.rowId;
    this.rowId = rowId !== null && this.byId.get(rowId)?.sortable ? rowId : null;
  }

  /** The column with this id, else GridColumnUnknown (a column the schema does not offer this caller). */
  column(id: string): GridColumn {
    const column = typeof id === "string" ? this.byId.get(id) : undefined;
    if (!column) throw new GridRefusal("GridColumnUnknown", String(id), "the schema offers no such column to this caller");
    return column;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  // ---- values ----

  /** A grid's value typed by the column's DataType, as QueryLib reads it; GridInvalidValue when it cannot be. */
  value(column: GridColumn, raw: GridValue): string | number | boolean {
    const bad = (why: string): never => {
      throw new GridRefusal("GridInvalidValue", column.id, `${JSON.stringify(raw)} ${why}`);
    };
    if (raw === null || raw === undefined) return bad("is not a value");
    switch (column.dataType) {
      case DataType.Number: {
        const n = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
        return Number.isFinite(n) ? n : bad("is not a number");
      }
      case DataType.Boolean:
        if (typeof raw === "boolean") return raw;
        if (raw === "true" || raw === "false") return raw === "true";
        return bad("is not true or false");
      case DataType.DateTime: {
        if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? bad("is not a date") : raw.toISOString();
        if (typeof raw !== "string") return bad("is not a date-time");
        if (withOffset.test(raw.trim())) {
          const t = new Date(raw.trim());
          return Number.isNaN(t.getTime()) ? bad("is not a date-time") : t.toISOString();
        }
        const instant = instantInZone(raw, this.timeZone);
        return instant ? instant.toISOString() : bad("is not a date-time (YYYY-MM-DD hh:mm:ss)");
      }
      case DataType.Date: {
        if (raw instanceof Date) return bad("must be a calendar date (YYYY-MM-DD), not an instant");
        const m = typeof raw === "string" ? /^(\d{4}-\d{2}-\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?)?$/.exec(raw.trim()) : null;
        if (!m || !instantInZone(m[1]!, "UTC")) return bad("is not a calendar date (YYYY-MM-DD)");
        return m[1]!;
      }
      case DataType.Enum: {
        const text = String(raw);
        // Enum values are matched to the schema's allowed values ignoring case, as the grid's text input would.
        const match = column.allowedValues?.find((v) => v === text) ?? column.allowedValues?.find((v) => v.toLowerCase() === text.toLowerCase());
        return match ?? text;
      }
      default:
        return typeof raw === "string" ? raw : typeof raw === "number" || typeof raw === "boolean" ? String(raw) : bad("is not text");
    }
  }

  // ---- conditions ----

  private require(column: GridColumn, op: Operator, why: string): Operator {
    if (!column.filterable) throw new GridRefusal("GridFilterNotAllowed", column.id, "this caller may not filter by it");
    if (!column.operators.has(op)) throw new GridRefusal("GridOperatorNotAllowed", column.id, `${why} needs ${op}, which this caller may not use on it`);
    return op;
  }

  /** The operator for a text test, folded unless the column is case-sensitive. */
  private textOperator(column: GridColumn, test: "equals" | "notEqual" | "contains" | "notContains" | "startsWith" | "endsWith", caseSensitive?: boolean): Operator {
    // Enum and Guid have no folding operator, whatever a predicate asks.
    const fold = column.dataType === DataType.Text && !(caseSensitive ?? column.caseSensitive);
    const table = {
      equals: fold ? Operator.IEqual : Operator.Equal,
      notEqual: fold ? Operator.INotEqual : Operator.NotEqual,
      contains: fold ? Operator.IContains : Operator.Contains,
      notContains: fold ? Operator.INotContains : Operator.NotContains,
      startsWith: fold ? Operator.IStartsWith : Operator.StartsWith,
      endsWith: fold ? Operator.IEndsWith : Operator.EndsWith,
    } as const;
    return table[test];
  }

  /**
   * The QueryLib condition tree of a grid's predicate (the semantics each adapter promised):
   * - text equals/contains/startsWith/endsWith: the I-operator unless the column is case-sensitive;
   * - text notEqual/notContains: the negation OR IsNull (a grid's negated text filters keep blank
   *   cells; QueryLib's negations never match null);
   * - blank: IsNull, OR Equal "" on text (an empty text is blank to the grids); not blank: the opposite;
   * - range: GreaterThan AND LessThan (exclusive), or Between when inclusive;
   * - set: In (null in the list: OR IsNull, and "" in the list on text); negated: NotIn, OR IsNull
   *   unless null is among the excluded values.
   */
  predicate(p: GridPredicate): TreePart {
    if (p.kind === "group") {
      if (p.parts.length === 0) throw new GridRefusal("GridInvalidRequest", null, "an empty AND/OR group");
      return { kind: "group", connector: p.connector === "OR" ? Connector.Or : Connector.And, parts: p.parts.map((q) => this.predicate(q)) };
    }
    return this.leafPredicate(this.column(p.column), p);
  }

  /** A predicate on one column (the column given, so that operatorsNeeded can ask about a column with every operator). */
  leafPredicate(column: GridColumn, p: Exclude<GridPredicate, { kind: "group" }>): TreePart {
    if (!column.filterable) throw new GridRefusal("GridFilterNotAllowed", column.id, "this caller may not filter by it");
    const leaf = (op: Operator, values: (string | number | boolean)[], why: string): TreePart => ({ kind: "condition", column: column.id, operator: this.require(column, op, why), dataType: column.dataType, values });
    const isText = column.dataType === DataType.Text || column.dataType === DataType.Enum || column.dataType === DataType.Guid;
    const or = (...parts: TreePart[]): TreePart => ({ kind: "group", connector: Connector.Or, parts });
    const and = (...parts: TreePart[]): TreePart => ({ kind: "group", connector: Connector.And, parts });
    switch (p.kind) {
      case "compare": {
        const value = this.value(column, p.value);
        if (!isText || typeof value !== "string") {
          if (p.test !== "equals" && p.test !== "notEqual") throw new GridRefusal("GridUnsupportedFilter", column.id, `"${p.test}" applies to text, and this column holds ${column.dataType}`);
          return leaf(p.test === "equals" ? Operator.Equal : Operator.NotEqual, [value], p.test);
        }
        const op = column.dataType === DataType.Guid ? (p.test === "equals" ? Operator.Equal : p.test === "notEqual" ? Operator.NotEqual : null) : this.textOperator(column, p.test, p.caseSensitive);
        if (op === null) throw new GridRefusal("GridUnsupportedFilter", column.id, `"${p.test}" does not apply to an identifier`);
        const condition = leaf(op, [value], p.test);
        return p.test === "notEqual" || p.test === "notContains" ? or(condition, leaf(Operator.IsNull, [], `${p.test} (blank cells match it)`)) : condition;
      }
      case "order": {
        if (!ordered.has(column.dataType)) throw new GridRefusal("GridUnsupportedFilter", column.id, `"${p.test}" compares numbers or dates, and this column holds ${column.dataType}`);
        const op = { lessThan: Operator.LessThan, lessThanOrEqual: Operator.LessThanOrEqual, greaterThan: Operator.GreaterThan, greaterThanOrEqual: Operator.GreaterThanOrEqual }[p.test];
        return leaf(op, [this.value(column, p.value)], p.test);
      }
      case "range": {
        if (!ordered.has(column.dataType)) throw new GridRefusal("GridUnsupportedFilter", column.id, `"inRange" compares numbers or dates, and this column holds ${column.dataType}`);
        const from = this.value(column, p.from);
        const to = this.value(column, p.to);
        const inclusive = p.inclusive ?? column.inRangeInclusive;
        if (p.negated) {
          if (inclusive) return leaf(Operator.NotBetween, [from, to], "outside an inclusive range");
          return or(leaf(Operator.LessThanOrEqual, [from], "outside an exclusive range"), leaf(Operator.GreaterThanOrEqual, [to], "outside an exclusive range"));
        }
        if (inclusive) return leaf(Operator.Between, [from, to], "an inclusive range");
        return and(leaf(Operator.GreaterThan, [from], "an exclusive range"), leaf(Operator.LessThan, [to], "an exclusive range"));
      }
      case "blank": {
        const empty = column.dataType === DataType.Text;
        if (p.blank) return empty ? or(leaf(Operator.IsNull, [], "blank"), leaf(Operator.Equal, [""], "blank (empty text)")) : leaf(Operator.IsNull, [], "blank");
        return empty ? and(leaf(Operator.IsNotNull, [], "not blank"), leaf(Operator.NotEqual, [""], "not blank (empty text)")) : leaf(Operator.IsNotNull, [], "not blank");
      }
      case "key":
        return p.value === null || p.value === undefined ? leaf(Operator.IsNull, [], "the blank group") : leaf(Operator.Equal, [this.value(column, p.value)], "a group's key");
      case "boolean":
        if (column.dataType !== DataType.Boolean) throw new GridRefusal("GridUnsupportedFilter", column.id, `a true/false filter on a ${column.dataType} column`);
        return leaf(Operator.Equal, [p.value], String(p.value));
      case "set": {
        const blanks = p.values.some((v) => v === null || v === "");
        const values = [...new Set(p.values.filter((v) => v !== null && v !== "").map((v) => this.value(column, v)))];
        if (column.maxInValues !== null && values.length > column.maxInValues) {
          throw new GridRefusal("GridInvalidValue", column.id, `a list of ${values.length} values; this caller may test at most ${column.maxInValues} against it`);
        }
        if (column.dataType === DataType.Boolean) {
          const parts = values.map((v) => leaf(p.negated ? Operator.NotEqual : Operator.Equal, [v], "a set of values"));
          if (blanks) parts.push(leaf(p.negated ? Operator.IsNotNull : Operator.IsNull, [], "a set with blanks"));
          if (parts.length === 0) return leaf(p.negated ? Operator.IsNotNull : Operator.IsNull, [], "an empty set");
          return parts.length === 1 ? parts[0]! : p.negated ? and(...parts) : or(...parts);
        }
        if (!p.negated) {
          // An empty selection matches nothing: IsNull AND IsNotNull says so without a special case on the server.
          if (values.length === 0 && !blanks) return and(leaf(Operator.IsNull, [], "an empty set"), leaf(Operator.IsNotNull, [], "an empty set"));
          // The blank key of a text column is null or empty text, as for the blank option.
          const listed = blanks && column.dataType === DataType.Text ? [...values, ""] : values;
          const list = listed.length > 0 ? [leaf(Operator.In, listed, "a set of values")] : [];
          return blanks ? (list.length ? or(...list, leaf(Operator.IsNull, [], "a set with blanks")) : leaf(Operator.IsNull, [], "a set with blanks")) : list[0]!;
        }
        // Nothing but blanks excluded: the non-blank rows; nothing excluded at all: every row.
        if (values.length === 0) return blanks ? leaf(Operator.IsNotNull, [], "a set excluding blanks") : or(leaf(Operator.IsNull, [], "nothing excluded"), leaf(Operator.IsNotNull, [], "nothing excluded"));
        const notIn = leaf(Operator.NotIn, values, "a set excluded");
        return blanks ? notIn : or(notIn, leaf(Operator.IsNull, [], "a set excluded (blank cells stay)"));
      }
    }
  }

  /** The ConditionGroup of a tree, recording each condition's JSON path. */
  group(part: TreePart, at: string, paths: Map<string, string>, sort = 0): ConditionGroup {
    const group = part.kind === "group" ? part : { kind: "group" as const, connector: Connector.And, parts: [part] };
    const conditions: Condition[] = [];
    const subConditionGroups: ConditionGroup[] = [];
    group.parts.forEach((p, i) => {
      if (p.kind === "condition") {
        paths.set(`${at}.conditions[${conditions.length}]`, p.column);
        conditions.push({ sort: i + 1, field: p.column, dataType: p.dataType, operator: p.operator, values: p.values });
      } else {
        subConditionGroups.push(this.group(p, `${at}.subConditionGroups[${subConditionGroups.length}]`, paths, i + 1));
      }
    });
    return { sort, connector: group.connector, conditions, subConditionGroups };
  }

  // ---- orders, selects, groups, aggregates, pages ----

  orders(sorts: readonly GridSort[], paths: Map<string, string>, tieBreak: boolean): OrderBy[] {
    const seen = new Set<string>();
    const orders: OrderBy[] = [];
    for (const s of sorts) {
      const column = this.column(s.column);
      if (!column.sortable) throw new GridRefusal("GridSortNotAllowed", column.id, "this caller may not sort by it");
      if (seen.has(column.id)) continue;
      seen.add(column.id);
      paths.set(`orders[${orders.length}]`, column.id);
      orders.push({ sort: orders.length + 1, field: column.id, direction: s.direction === "desc" ? Direction.Descending : Direction.Ascending });
    }
    if (tieBreak && this.rowId !== null && !seen.has(this.rowId)) orders.push({ sort: orders.length + 1, field: this.rowId, direction: Direction.Ascending });
    return orders;
  }

  /** The columns a Filter selects: the ones asked for that the caller may see (all selectable ones when none are named). */
  selects(columns: readonly string[] | null, paths: Map<string, string>): string[] {
    const chosen = columns === null ? this.columns.filter((c) => c.selectable).map((c) => c.id) : columns.map((id) => {
      const column = this.column(id);
      if (!column.selectable) throw new GridRefusal("GridSelectNotAllowed", id, "this caller may not see its values");
      return id;
    });
    chosen.forEach((id, i) => paths.set(`selects[${i}]`, id));
    return chosen;
  }

  groupKey(id: string): GridColumn {
    const column = this.column(id);
    if (!column.groupable) throw new GridRefusal("GridGroupNotAllowed", id, "this caller may not group by it");
    return column;
  }

  aggregate(id: string | null, aggregator: Aggregator, alias: string): AggregateBy {
    if (id === null || aggregator === Aggregator.Count) return { field: null, alias, aggregator: Aggregator.Count };
    const column = this.column(id);
    if (!column.aggregators.includes(aggregator)) throw new GridRefusal("GridAggregateNotAllowed", id, `this caller may not take its ${aggregator}`);
    return { field: column.id, alias, aggregator };
  }

  /**
   * The page that holds rows [startRow, endRow) (a grid's block): the block itself when it starts
   * at a multiple of its size, else the smallest page size whose one page covers it; the rows
   * outside the block are dropped by the adapter (skip, take).
   */
  page(startRow: number, endRow: number, maxPageSize = 1000): GridPage {
    if (!Number.isInteger(startRow) || !Number.isInteger(endRow) || startRow < 0 || endRow <= startRow) {
      throw new GridRefusal("GridInvalidRequest", null, `rows ${startRow} to ${endRow} are not a block (0 ≤ startRow < endRow, whole numbers)`);
    }
    const take = endRow - startRow;
    for (let size = take; size <= Math.min(endRow, maxPageSize); size++) {
      if (Math.floor(startRow / size) === Math.floor((endRow - 1) / size)) {
        return { page: { pageNumber: Math.floor(startRow / size) + 1, pageSize: size }, skip: startRow % size, take };
      }
    }
    throw new GridRefusal("GridInvalidRequest", null, `rows ${startRow} to ${endRow} fit in no page of at most ${maxPageSize} rows`);
  }

  // ---- requests ----

  /** A Filter from a grid's predicates, sorts, columns and block. */
  filter(parts: { where: readonly GridPredicate[]; sorts: readonly GridSort[]; select?: readonly string[] | null; page?: PageBy | null }): BuiltRequest<Filter> {
    return this.filterFrom(this.allOf(parts.where), parts);
  }

  /** A Filter from a condition tree already checked and typed (the MUI and Refine adapters' mixed trees, tree.ts), sorts, columns and block. */
  filterFrom(where: TreePart | null, parts: { sorts: readonly GridSort[]; select?: readonly string[] | null; page?: PageBy | null }): BuiltRequest<Filter> {
    const paths = new Map<string, string>();
    const group = where ? this.group(where, "conditionGroup", paths) : null;
    const request: Filter = {
      ...(group ? { conditionGroup: group } : {}),
      orders: this.orders(parts.sorts, paths, true),
      selects: this.selects(parts.select ?? null, paths),
      ...(parts.page ? { page: parts.page } : {}),
    };
    return { request, paths };
  }

  /** A Summary: the rows matching `where`, grouped by `groupBy`, with aggregates (a sort on another column is dropped: a grid sends its row sorts to every level). */
  summary(parts: { where: readonly GridPredicate[]; groupBy: readonly string[]; aggregates: readonly GridAggregate[]; sorts: readonly GridSort[]; page?: PageBy | null }): BuiltRequest<Summary> {
    return this.summaryFrom(this.allOf(parts.where), parts, "drop");
  }

  /**
   * A Summary from a condition tree already checked and typed: grouped by keys the caller may group
   * by, aggregates it may take, ordered by its keys and aggregates only (`otherSorts`: a sort on any
   * other column is dropped, or refused with GridSortNotAllowed).
   */
  summaryFrom(where: TreePart | null, parts: { groupBy: readonly string[]; aggregates: readonly GridAggregate[]; sorts: readonly GridSort[]; page?: PageBy | null }, otherSorts: "drop" | "refuse"): BuiltRequest<Summary> {
    const paths = new Map<string, string>();
    const group = where ? this.group(where, "conditionGroup", paths) : null;
    const keys = parts.groupBy.map((id, i) => {
      paths.set(`groupBy.fields[${i}]`, id);
      return this.groupKey(id).id;
    });
    const aggregateBy = parts.aggregates.map((a, i) => {
      if (a.column !== null) paths.set(`groupBy.aggregateBy[${i}]`, a.column);
      return this.aggregate(a.column, a.aggregator, a.alias);
    });
    const orders: OrderBy[] = [];
    for (const s of parts.sorts) {
      const alias = parts.aggregates.find((a) => a.alias === s.column);
      if (!alias && !keys.includes(s.column)) {
        if (otherSorts === "drop") continue;
        throw new GridRefusal("GridSortNotAllowed", s.column, "a Summary orders by its group keys and aggregates only");
      }
      if (!alias && !this.column(s.column).sortable) throw new GridRefusal("GridSortNotAllowed", s.column, "this caller may not sort by it");
      if (orders.some((o) => o.field === s.column)) continue;
      paths.set(`orders[${orders.length}]`, alias?.column ?? s.column);
      orders.push({ sort: orders.length + 1, field: s.column, direction: s.direction === "desc" ? Direction.Descending : Direction.Ascending });
    }
    const request: Summary = {
      ...(group ? { conditionGroup: group } : {}),
      groupBy: { fields: keys, aggregateBy },
      ...(orders.length ? { orders } : {}),
      ...(parts.page ? { page: parts.page } : {}),
    };
    return { request, paths };
  }

  /** Predicates ANDed into one tree, or null when there are none. */
  private allOf(where: readonly GridPredicate[]): TreePart | null {
    return where.length ? this.predicate({ kind: "group", connector: "AND", parts: where }) : null;
  }
}

/** A condition tree before it is numbered (GridCore.group numbers it and records its paths). */
export type TreePart =
  | { readonly kind: "condition"; readonly column: string; readonly operator: Operator; readonly dataType: DataType; readonly values: (string | number | boolean)[] }
  | { readonly kind: "group"; readonly connector: Connector; readonly parts: readonly TreePart[] };

// ---- errors back to columns -------------------------------------------------------------------

/** The `{ code, errorCode?, message, path? }` QueryLib answers a refused request with. */
export interface QueryLibErrorBody { readonly code: string; readonly errorCode?: number | null; readonly message?: string; readonly path?: string | null }

/**
 * The grid column a QueryLib error is about: the recorded path that is the longest prefix of the
 * error's `path` (a condition's value, its operator, an order, a group key, an aggregate), else null.
 */
export function columnOfError(error: { readonly path?: string | null } | null | undefined, paths: GridPaths): string | null {
  const path = error?.path;
  if (typeof path !== "string" || path === "") return null;
  let best: string | null = null;
  let length = -1;
  for (const [prefix, column] of paths) {
    const boundary = path.length === prefix.length || path[prefix.length] === "." || path[prefix.length] === "[";
    if (path.startsWith(prefix) && boundary && prefix.length > length) {
      best = column;
      length = prefix.length;
    }
  }
  return best;
}

/** A QueryLib error answered to a grid's request, with the column it is about (null when it names none). */
export class GridQueryError extends Error {
  readonly code: string;
  readonly errorCode: number | null;
  readonly path: string | null;
  readonly column: string | null;
  readonly status: number | null;
  constructor(body: QueryLibErrorBody, column: string | null, status: number | null = null, cause?: unknown) {
    super(body.message ?? body.code, cause === undefined ? undefined : { cause });
    this.name = "GridQueryError";
    this.code = body.code;
    this.errorCode = body.errorCode ?? null;
    this.path = body.path ?? null;
    this.column = column;
    this.status = status;
  }
}

/** Reads a nested path of a row ("contact.email"). */
export function valueAt(row: unknown, path: string): unknown {
  let at: unknown = row;
  for (const part of path.split(".")) {
    if (at === null || at === undefined || typeof at !== "object") return null;
    at = (at as Record<string, unknown>)[part];
  }
  return at ?? null;
}

/** Writes a nested path of a row, creating the objects on the way. */
export function setValueAt(row: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let at = row;
  for (const part of parts.slice(0, -1)) {
    if (at[part] === null || typeof at[part] !== "object") at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts.at(-1)!] = value;
}

/** The key of a Summary row's group field (docs/SHAPES.md: dots removed, each later segment capitalised). */
export function summaryKeyOf(path: string): string {
  return path.split(".").map((s, i) => (i === 0 ? s : s.charAt(0).toUpperCase() + s.slice(1))).join("");
}

/** A value of each DataType, to ask which operators a predicate takes (operatorsNeeded). */
const sampleValues: Readonly<Record<DataType, string | number | boolean>> = {
  [DataType.Text]: "x", [DataType.Enum]: "x", [DataType.Guid]: "00000000-0000-0000-0000-000000000000", [DataType.Number]: 1,
  [DataType.Boolean]: true, [DataType.DateTime]: "2024-01-01T00:00:00Z", [DataType.Date]: "2024-01-01",
};
const everyOperator = new Set(Object.values(Operator));
const neutral = new GridCore({ entity: "", fields: [] }, { timeZone: "UTC" });

/**
 * The operators a grid-neutral predicate uses on a column: the predicate is built (GridCore.leafPredicate,
 * the very translation a request gets) on the column with every operator allowed, and its
 * conditions' operators are collected; none when the predicate does not apply to the column's DataType.
 */
export function operatorsNeeded(column: GridColumn, kind: Exclude<GridPredicate["kind"], "group">, test?: string): Operator[] {
  const value = sampleValues[column.dataType];
  const on = column.id;
  const predicate: Exclude<GridPredicate, { kind: "group" }> | null =
    kind === "compare" ? { kind, column: on, test: test as "equals", value }
    : kind === "order" ? { kind, column: on, test: test as "lessThan", value }
    : kind === "range" ? { kind, column: on, from: value, to: value }
    : kind === "blank" ? { kind, column: on, blank: test !== "notBlank" }
    : kind === "boolean" ? { kind, column: on, value: test !== "false" }
    : kind === "set" ? { kind, column: on, values: [value] }
    : kind === "key" ? { kind, column: on, value }
    : null;
  if (predicate === null) return [];
  let tree: TreePart;
  try {
    tree = neutral.leafPredicate({ ...column, filterable: true, operators: everyOperator }, predicate);
  } catch {
    return [];
  }
  const used = new Set<Operator>();
  const collect = (part: TreePart): void => {
    if (part.kind === "condition") used.add(part.operator);
    else part.parts.forEach(collect);
  };
  collect(tree);
  return [...used];
}

/** Whether the caller may use every operator a predicate needs (an empty need: never). */
export const offers = (column: GridColumn, needed: readonly Operator[]) => needed.length > 0 && needed.every((op) => column.operators.has(op)) && needed.every((op) => operators[op].dataTypes.has(column.dataType));
