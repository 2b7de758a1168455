// A simple Filter as URL query parameters, for links, HTTP caches and browser history (GET routes):
//
//   ?where[city][Equal]=Lima&where[tier][In]=gold&where[tier][In]=silver&order=balance:desc&page=2&pageSize=50
//
// - `where[<field>][<Operator>]=<value>`: one condition per (field, operator) pair, in the order
//   the pairs first appear; each repetition of the key is one more value (In, Between); IsNull and
//   IsNotNull take one empty value. The conditions are joined with And. The DataType is not in
//   the URL: the server takes each field's own (what its schema reports), so a value is the text
//   the JSON body would hold.
// - `order=<field>[:asc|:desc]`, `select=<field>`: repeatable, or comma-separated.
// - `page` (default 1 when pageSize is given) and `pageSize`: decimal integers, once each.
// - `after` or `before` (a cursor, `after=` for the first page) instead of `page`, and `count`
//   (exact, estimated, none): once each (docs/SHAPES.md "Cursor pages and counts").
// Anything else is refused (InvalidQueryString), unless the route reads it itself (`ignore`).
// Both directions are here, without server dependencies, so a front-end that builds links and a
// server that reads them share one definition.
import { LogicException } from "../errors/logic-exception.js";
import { type DataType, Direction, Operator } from "../shapes/enums.js";
import type { Filter } from "../shapes/shapes.js";
import { operatorsWhere } from "../shapes/operator-table.js";

export const InvalidQueryString = "InvalidQueryString";

const whereKey = /^where\[([^[\]]+)\]\[([A-Za-z]+)\]$/;
/** The operators that take no value (the operator table's noValue column). */
const noValueOperators: readonly Operator[] = operatorsWhere((m) => m.noValue);
const operatorByName = new Map(Object.values(Operator).map((op) => [op.toLowerCase(), op]));

function refuse(explanation: string, parameter: string): never {
  throw new LogicException(InvalidQueryString, `${InvalidQueryString}: ${explanation} (at ${parameter})`, parameter);
}

/** `"a,b"` and repeated parameters alike: every non-empty item, in order. */
function listOf(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
}

function onceOf(values: readonly string[], parameter: string): string {
  if (values.length !== 1) refuse(`${parameter} must be given once`, parameter);
  return values[0]!;
}

function integerOf(values: readonly string[], parameter: string): number {
  if (values.length !== 1) refuse(`${parameter} must be given once`, parameter);
  const text = values[0]!.trim();
  // Digits only, and few enough to be an exact integer: the shape parser then checks the range.
  if (!/^\d{1,9}$/.test(text)) refuse(`${parameter} must be a whole number, not "${text}"`, parameter);
  return Number(text);
}

export interface FilterQueryStringOptions {
  /** Parameters the route reads itself (e.g. `sql`): left alone instead of refused. */
  readonly ignore?: readonly string[];
}

/**
 * The Filter JSON a query string stands for (plain JSON: the shape parser validates it as it
 * validates a body). `dataTypeOf(field)` gives each where field's DataType.
 */
export function filterJsonFromQueryString(
  search: string | URLSearchParams, dataTypeOf: (field: string) => DataType, options: FilterQueryStringOptions = {},
): Record<string, unknown> {
  const parameters = typeof search === "string" ? new URLSearchParams(search.startsWith("?") ? search.slice(1) : search) : search;
  const ignored = new Set(options.ignore ?? []);
  const conditions = new Map<string, { field: string; operator: Operator; values: string[] }>();
  const grouped = new Map<string, string[]>();
  for (const [key, value] of parameters) {
    const where = whereKey.exec(key);
    if (where) {
      const field = where[1]!;
      const operator = operatorByName.get(where[2]!.toLowerCase()) ?? refuse(`"${where[2]}" is not an operator; use one of ${Object.values(Operator).join(", ")}`, key);
      const id = `${field}\u0000${operator}`;
      const condition = conditions.get(id) ?? { field, operator, values: [] };
      condition.values.push(value);
      conditions.set(id, condition);
      continue;
    }
    if (ignored.has(key)) continue;
    if (!["order", "select", "page", "pageSize", "after", "before", "count"].includes(key)) {
      refuse(`"${key}" is not a filter parameter; use where[field][Operator], order, select, page, pageSize, after, before and count`, key);
    }
    grouped.set(key, [...(grouped.get(key) ?? []), value]);
  }
  const json: Record<string, unknown> = {};
  if (conditions.size > 0) {
    const list = [...conditions.values()].map((c, i) => {
      const at = `where[${c.field}][${c.operator}]`;
      let values: string[] = c.values;
      if (noValueOperators.includes(c.operator)) {
        if (values.length !== 1 || values[0] !== "") refuse(`${c.operator} takes no value: write ${at}= once, with nothing after =`, at);
        values = [];
      }
      return { sort: i + 1, field: c.field, dataType: dataTypeOf(c.field), operator: c.operator, values };
    });
    json.conditionGroup = { sort: 0, connector: "And", conditions: list, subConditionGroups: [] };
  }
  const orders = grouped.get("order");
  if (orders) {
    json.orders = listOf(orders).map((item, i) => {
      const [field, direction, extra] = item.split(":");
      const descending = /^desc$/i.test(direction ?? "");
      if (extra !== undefined || (direction !== undefined && !descending && !/^asc$/i.test(direction))) {
        refuse(`"${item}" is not field, field:asc or field:desc`, "order");
      }
      return { sort: i + 1, field: field!.trim(), direction: descending ? Direction.Descending : Direction.Ascending };
    });
  }
  const selects = grouped.get("select");
  if (selects) json.selects = listOf(selects);
  const page = grouped.get("page");
  const pageSize = grouped.get("pageSize");
  const after = grouped.get("after");
  const before = grouped.get("before");
  const count = grouped.get("count");
  if (page || pageSize || after || before || count) {
    // A missing pageSize is left for the shape parser, which names it (PageSizeMustBeGreaterThanZero at page.pageSize);
    // so is a page number beside a cursor (PageMustHasEitherPageNumberOrCursor).
    const cursorPage = after !== undefined || before !== undefined;
    json.page = {
      ...(page || !cursorPage ? { pageNumber: page ? integerOf(page, "page") : 1 } : {}),
      ...(pageSize ? { pageSize: integerOf(pageSize, "pageSize") } : {}),
      ...(after ? { after: onceOf(after, "after") } : {}),
      ...(before ? { before: onceOf(before, "before") } : {}),
      ...(count ? { count: onceOf(count, "count") } : {}),
    };
  }
  return json;
}

const textOf = (value: unknown): string =>
  value === null || value === undefined ? "" : value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value);

export interface FilterToQueryStringOptions {
  /**
   * Each field's own DataType (what the schema reports), to refuse a condition that names another:
   * the URL carries none, so the server would read it with the field's own.
   */
  readonly dataTypeOf?: (field: string) => DataType | null | undefined;
}

/** A lone UTF-16 surrogate: URLSearchParams would write U+FFFD, another text than the JSON body's (which the server refuses). */
const loneSurrogate = /\p{Cs}/u;

/**
 * The query string (without "?") of a Filter that has one: conditions joined with And only, no
 * sub-groups, one condition per (field, operator), each with the values its operator takes, an
 * empty or absent `selects` never empty, no lone surrogate. Throws (InvalidQueryString, path
 * "filter…") for a Filter whose query string would not ask the same: it needs a JSON body. The
 * DataTypes are left out: the server uses each field's own (`options.dataTypeOf` checks them).
 */
export function filterToQueryString(filter: Filter, options: FilterToQueryStringOptions = {}): string {
  const parameters = new URLSearchParams();
  const group = filter.conditionGroup;
  if (group) {
    if (group.subConditionGroups.length > 0) refuse("a Filter with sub-groups has no query string; send it as a JSON body", "filter.conditionGroup");
    if (group.conditions.length > 1 && group.connector !== "And") refuse("only conditions joined with And have a query string; send it as a JSON body", "filter.conditionGroup");
    const seen = new Set<string>();
    for (const condition of [...group.conditions].sort((a, b) => a.sort - b.sort)) {
      const key = `where[${condition.field ?? ""}][${condition.operator}]`;
      if (seen.has(key)) refuse(`${key} appears twice; a query string holds one condition per field and operator`, "filter.conditionGroup");
      if (!condition.field || /[[\]]/.test(condition.field) || loneSurrogate.test(condition.field)) refuse(`the field "${condition.field ?? ""}" cannot be written in a query string`, "filter.conditionGroup");
      seen.add(key);
      const own = options.dataTypeOf?.(condition.field);
      if (own && own !== condition.dataType) refuse(`${key} names DataType ${condition.dataType}; the URL is read with the field's own, ${own}`, "filter.conditionGroup");
      const texts = condition.values.map(textOf);
      if (texts.some((t) => loneSurrogate.test(t))) refuse(`${key} has a value with a lone UTF-16 surrogate, which a URL cannot carry`, "filter.conditionGroup");
      if (noValueOperators.includes(condition.operator)) {
        if (texts.length > 0) refuse(`${key} takes no value`, "filter.conditionGroup");
        parameters.append(key, "");
        continue;
      }
      // Without a value the key would still be written once, and read back as one empty value: another request.
      if (texts.length === 0) refuse(`${key} has no value`, "filter.conditionGroup");
      for (const text of texts) parameters.append(key, text);
    }
  }
  for (const order of [...(filter.orders ?? [])].sort((a, b) => a.sort - b.sort)) {
    if (!order.field || /[,:]/.test(order.field) || loneSurrogate.test(order.field)) refuse(`the order field "${order.field ?? ""}" cannot be written in a query string`, "filter.orders");
    parameters.append("order", `${order.field}:${order.direction === Direction.Descending ? "desc" : "asc"}`);
  }
  if (filter.selects) {
    // An empty list is refused as a body (MustHasFields) but would vanish from a URL; a comma inside a name would split it.
    if (filter.selects.length === 0 || filter.selects.some((s) => s.includes(",") || s.trim() === "" || loneSurrogate.test(s))) {
      refuse("these selects cannot be written in a query string", "filter.selects");
    }
    parameters.append("select", filter.selects.join(","));
  }
  if (filter.page) {
    const { after, before, count } = filter.page;
    if (after === undefined || after === null) {
      if (before === undefined || before === null) parameters.append("page", String(filter.page.pageNumber));
      else parameters.append("before", before);
    } else parameters.append("after", after);
    parameters.append("pageSize", String(filter.page.pageSize));
    if (count !== undefined && count !== null) parameters.append("count", count);
  }
  return parameters.toString();
}
