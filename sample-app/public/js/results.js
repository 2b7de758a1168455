// One page of results: totals, paging, and a table whose transformed columns say so
// (masked, hashed, tokenized, generalized, …) in the header and on every cell.
import { h } from "./dom.js";
import { markerOf, transformActions } from "./schema.js";
import { privacyPanel } from "./privacy.js";

/** A row as flat dotted keys: { contact: { email } } → { "contact.email": … }. */
function flatten(row, prefix = "", out = {}) {
  for (const [key, value] of Object.entries(row ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)) flatten(value, path, out);
    else out[path] = value;
  }
  return out;
}

/** How a value reads in a cell (the browser tests read cells with the same rule). */
export function cellText(value) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return JSON.stringify(value);
  return String(value);
}

/**
 * The requested columns that came back, in their order, then any others (a whole object's
 * members); a navigation that is null on a row ("contact": null) is not a column of its own when
 * its fields were asked for, and the key a typed result adds to an object whose members were
 * asked for one by one ("contact.id" beside "contact.email", 2.1.5) is not shown unasked.
 */
function columnsOf(rows, requested) {
  const present = new Set(rows.flatMap((r) => Object.keys(r)));
  const ordered = requested.filter((c) => present.has(c) || [...present].some((p) => c.startsWith(`${p}.`)));
  const parentOf = (key) => key.slice(0, Math.max(0, key.lastIndexOf(".")));
  const addedKey = (key) => {
    const parent = parentOf(key);
    return parent !== "" && !requested.includes(parent) && requested.some((c) => c.startsWith(`${parent}.`));
  };
  for (const key of present) if (!ordered.includes(key) && !ordered.some((c) => c.startsWith(`${key}.`)) && !addedKey(key)) ordered.push(key);
  return ordered;
}

/**
 * result: the server's FilterResult/SummaryResult; requested: the column paths asked for (in
 * order); schema: for labels and markers; onPage(to): loads another page, `to` a page number, or
 * { after } / { before } (a cursor page's nextCursor / previousCursor).
 */
export function resultsView(result, { requested, schema, mode, onPage }) {
  const rows = result.data.map((r) => flatten(r));
  const columns = columnsOf(rows, requested);
  const masked = new Map((result.policy?.entries ?? []).filter((e) => e.feature === "Select" && transformActions.has(e.action)).map((e) => [e.field, e.source]));
  const head = columns.map((column) => {
    const field = schema.field(column);
    const marker = field ? markerOf(field) : null;
    return { column, field, marker, source: masked.get(column) ?? null };
  });
  const pageCount = result.pageCount;
  const byCursor = "nextCursor" in result || "previousCursor" in result;
  const noun = (n) => `${mode === "summary" ? "group" : "row"}${n === 1 ? "" : "s"}`;
  // The total as counted: exact, the planner's estimate ("about"), or none (count "none", or an estimate refused).
  const total = result.totalCount === null ? `${noun(2)}: total not counted`
    : result.count === "estimated" ? `about ${result.totalCount} ${noun(result.totalCount)} (estimated)`
      : `${result.totalCount} ${noun(result.totalCount)} in total`;
  const where = byCursor ? "by cursor" : result.totalCount === null || result.count === "estimated" ? `page ${result.pageNumber}` : `page ${result.pageNumber} of ${Math.max(pageCount, 1)}`;
  const hasNext = result.hasNextPage ?? result.pageNumber < pageCount;
  const hasPrevious = result.hasPreviousPage ?? result.pageNumber > 1;
  return h("section", { class: "results", "aria-label": "Results" },
    h("div", { class: "results-head" },
      h("h2", {}, mode === "summary" ? "Groups" : "Rows"),
      h("p", { class: "totals", "data-total": result.totalCount === null ? "none" : result.totalCount, "data-count": result.count ?? "exact" },
        `${total} · ${where} · ${result.pageSize} per page`),
      h("div", { class: "pager" },
        h("button", { type: "button", focus: "page:previous", disabled: !hasPrevious, onclick: () => onPage(byCursor ? { before: result.previousCursor } : result.pageNumber - 1) }, "‹ Previous"),
        h("button", { type: "button", focus: "page:next", disabled: !hasNext, onclick: () => onPage(byCursor ? { after: result.nextCursor } : result.pageNumber + 1) }, "Next ›"))),
    privacyPanel(result),
    rows.length === 0 ? h("p", { class: "hint" }, "No rows on this page.") :
      h("div", { class: "table-wrap", tabindex: 0, "aria-label": "Results table (scrolls)" },
        h("table", {},
          h("thead", {}, h("tr", {}, head.map(({ column, field, marker, source }) => h("th", { scope: "col", "data-column": column, title: source ? `${marker?.detail ?? "transformed"} · ${source}` : column },
            field ? schema.label(column) : column,
            marker ? h("span", { class: `marker ${marker.kind}` }, marker.text) : null)))),
          h("tbody", {}, rows.map((row) => h("tr", {}, head.map(({ column, marker }) => h("td", { "data-column": column, class: marker && row[column] !== null && row[column] !== undefined ? `transformed ${marker.kind}` : null }, cellText(row[column])))))))));
}
