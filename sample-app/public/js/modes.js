// The three modes on the one condition editor: Filter (conditions, columns, sort, page),
// Summary (conditions before grouping, group keys, aggregates with aliases, having on those
// aliases) and Segment (condition sets joined by Union, Intersect or Except).
import { h, uid } from "./dom.js";
import { groupEditor } from "./conditions.js";
import { Aggregators, Intersections, newGroup, newId } from "./model.js";
import { operators } from "/querylib/client/index.js";
import { chipList, errorNote, fieldSelect, filterSource, listSource, schemaSource } from "./pickers.js";

// From the operator table (querylib/client): what a number takes, and the pattern tests a Having cannot use.
const numericOperators = Object.keys(operators).filter((op) => operators[op].dataTypes.has("Number"));
const patternTests = new Set(["contains", "startsWith", "endsWith"]);
const numericAggregators = new Set(["Count", "CountDistinct", "Sumation", "Average"]);
const summing = new Set(["Sumation", "Average"]);

const section = (title, hint, ...content) => h("section", { class: "editor-section" }, h("h3", {}, title), hint ? h("p", { class: "hint" }, hint) : null, ...content);

export function modeEditor(mode, query, ctx) {
  const { schema } = ctx;
  const where = { ...ctx, source: schemaSource(schema, "Where") };
  if (mode === "filter") {
    return [
      section("Rows where", null, groupEditor(query.where, where, { label: "Rows where" })),
      section("Columns", "None chosen: every column you may see.", columnsEditor(query, ctx)),
      section("Sort", null, ordersEditor(query, schemaSource(schema, "Order"), ctx)),
      section("Page", null, pageEditor(query.page, ctx, mode)),
    ];
  }
  if (mode === "summary") {
    const aliases = listSource("Aggregates", query.aggregates.filter((a) => a.alias.trim()).map((a) => havingField(a, schema)));
    const keys = schemaSource(schema, "Group");
    const sortable = {
      groups: [...keys.groups.map((g) => ({ ...g, fields: g.fields.filter((f) => query.groupFields.some((k) => k.path === f.path)) })).filter((g) => g.fields.length), ...aliases.groups],
      find: (path) => (query.groupFields.some((k) => k.path === path) ? keys.find(path) : undefined) ?? aliases.find(path),
      label: (path) => (keys.find(path) ? keys.label(path) : aliases.label(path)),
    };
    return [
      section("Rows where (before grouping)", null, groupEditor(query.where, where, { label: "Rows where" })),
      section("Group by", null, chipList({
        items: query.groupFields, source: keys, label: "Group keys", addLabel: "group by", keyPrefix: "group-keys", errors: ctx.errors,
        onAdd: (path) => { query.groupFields.push({ id: newId("k"), path }); ctx.changed("structure", "group-keys:add"); },
        onRemove: (item, focus) => { query.groupFields.splice(query.groupFields.indexOf(item), 1); ctx.changed("structure", focus); },
      })),
      section("Aggregates", "Each has an alias; Having and Sort refer to it.", aggregatesEditor(query, schemaSource(schema, "Aggregate"), ctx)),
      section("Having", "Conditions on the aggregates' aliases.", groupEditor(query.having, { ...ctx, source: aliases }, { label: "Having" })),
      section("Sort", null, ordersEditor(query, sortable, ctx)),
      section("Page", null, pageEditor(query.page, ctx, mode)),
    ];
  }
  const setSource = schemaSource(schema, "Where", "Segment");
  return [
    section("Condition sets", "Each set selects rows; later sets join the result by Union, Intersect or Except.",
      query.sets.map((set, i) => h("fieldset", { class: "condition-set", "data-part": set.id },
        h("legend", {}, `Set ${i + 1}`, " ",
          i === 0 ? null : h("select", { "aria-label": `Set ${i + 1}: combine with the sets before`, focus: `${set.id}:intersection`, onchange: (e) => { set.intersection = e.target.value; ctx.changed("structure"); } },
            Intersections.map((x) => h("option", { value: x, selected: (set.intersection ?? "Union") === x }, x))),
          query.sets.length > 1 ? h("button", { type: "button", class: "icon", "aria-label": `Remove set ${i + 1}`, focus: `${set.id}:remove`, onclick: () => { query.sets.splice(i, 1); ctx.changed("structure", "sets:add"); } }, "×") : null),
        errorNote(ctx.errors, set.id),
        groupEditor(set.group, { ...ctx, source: setSource }, { label: `Set ${i + 1} rows where` }))),
      h("button", { type: "button", focus: "sets:add", onclick: () => { const set = { id: newId("s"), intersection: "Union", group: newGroup() }; query.sets.push(set); ctx.changed("structure", `${set.group.id}:add`); } }, "+ Set")),
    section("Columns", "None chosen: every column you may see.", columnsEditor(query, ctx)),
    section("Sort", null, ordersEditor(query, schemaSource(ctx.schema, "Order"), ctx)),
    section("Page", null, pageEditor(query.page, ctx, mode)),
  ];
}

function columnsEditor(query, ctx) {
  return chipList({
    items: query.selects, source: schemaSource(ctx.schema, "Select"), label: "Columns", addLabel: "add column", keyPrefix: "columns", errors: ctx.errors,
    onAdd: (path) => { query.selects.push({ id: newId("f"), path }); ctx.changed("structure", "columns:add"); },
    onRemove: (item, focus) => { query.selects.splice(query.selects.indexOf(item), 1); ctx.changed("structure", focus); },
  });
}

function ordersEditor(query, source, ctx) {
  const chosen = new Set(query.orders.map((o) => o.field));
  const remaining = { ...source, groups: source.groups.map((g) => ({ ...g, fields: g.fields.filter((f) => !chosen.has(f.path)) })).filter((g) => g.fields.length) };
  return h("div", { class: "rows" },
    h("ol", { class: "orders" }, query.orders.map((order, i) => h("li", { "data-part": order.id },
      fieldSelect({ source, value: order.field, label: `Sort ${i + 1}: field`, focus: `${order.id}:field`, onchange: (path) => { order.field = path; ctx.changed("structure", `${order.id}:field`); } }),
      h("select", { "aria-label": `Sort ${i + 1}: direction`, focus: `${order.id}:direction`, onchange: (e) => { order.direction = e.target.value; ctx.changed("structure"); } },
        ["Ascending", "Descending"].map((d) => h("option", { value: d, selected: order.direction === d }, d === "Ascending" ? "ascending" : "descending"))),
      h("button", { type: "button", class: "icon", "aria-label": `Remove sort ${i + 1}`, focus: `${order.id}:remove`, onclick: () => { query.orders.splice(i, 1); ctx.changed("structure", "orders:add"); } }, "×"),
      errorNote(ctx.errors, order.id)))),
    fieldSelect({ source: remaining, value: "", label: "sort by", focus: "orders:add", placeholder: "+ sort by…",
      onchange: (path) => { if (path) { query.orders.push({ id: newId("o"), field: path, direction: "Ascending" }); ctx.changed("structure", "orders:add"); } } }));
}

/**
 * Page number and size, how to page (numbered, or by cursor: Filter and Segment) and how the total
 * is counted (exact, estimated, none: docs/SHAPES.md "Cursor pages and counts").
 */
function pageEditor(page, ctx, mode) {
  const number = (key, text) => {
    const id = uid("page");
    return h("span", { class: "labelled" }, h("label", { for: id }, text),
      h("input", { id, type: "number", min: 1, step: 1, value: page[key], focus: `page:${key}`, oninput: (e) => { page[key] = e.target.value === "" ? "" : Number(e.target.value); ctx.changed("value"); } }));
  };
  const choice = (key, text, options) => {
    const id = uid("page");
    return h("span", { class: "labelled" }, h("label", { for: id }, text),
      h("select", { id, focus: `page:${key}`, onchange: (e) => { page[key] = e.target.value; page.after = ""; page.before = null; ctx.changed("structure", `page:${key}`); } },
        options.map(([value, label]) => h("option", { value, selected: (page[key] ?? options[0][0]) === value }, label))));
  };
  const cursorable = mode !== "summary";
  const byCursor = cursorable && page.paging === "cursor";
  return h("div", { class: "page-editor", "data-part": page.id },
    cursorable ? choice("paging", "Paging", [["numbered", "numbered"], ["cursor", "by cursor"]]) : null,
    byCursor ? null : number("pageNumber", "Page"),
    number("pageSize", "Rows per page"),
    choice("count", "Total", mode === "summary" ? [["exact", "exact"], ["none", "not counted"]] : [["exact", "exact"], ["estimated", "estimated"], ["none", "not counted"]]),
    errorNote(ctx.errors, page.id));
}

function aggregatesEditor(query, source, ctx) {
  const uniqueAlias = (base) => {
    let alias = base;
    for (let n = 2; query.aggregates.some((a) => a.alias === alias); n++) alias = `${base}${n}`;
    return alias;
  };
  const suggested = (a) => (a.field ? `${a.aggregator === "Sumation" ? "sum" : a.aggregator[0].toLowerCase() + a.aggregator.slice(1)}${a.field.split(".").map((s) => s[0].toUpperCase() + s.slice(1)).join("")}` : a.aggregator[0].toLowerCase() + a.aggregator.slice(1));
  return h("div", { class: "rows" },
    h("ul", { class: "aggregates" }, query.aggregates.map((a, i) => {
      const aliasId = uid("alias");
      const refresh = () => { if (a.autoAlias !== false) a.alias = uniqueAlias(suggested(a)); };
      return h("li", { "data-part": a.id },
        h("select", { "aria-label": `Aggregate ${i + 1}: function`, focus: `${a.id}:aggregator`, onchange: (e) => { a.aggregator = e.target.value; refresh(); ctx.changed("structure", `${a.id}:aggregator`); } },
          Aggregators.map((x) => h("option", { value: x, selected: a.aggregator === x }, x === "Sumation" ? "Sum (Sumation)" : x))),
        // Under inference protection a field shown transformed is never summed or averaged (schema: inference.summable).
        fieldSelect({ source: summing.has(a.aggregator) ? filterSource(source, (f) => !f.inference || f.inference.summable) : source, value: a.field, label: `Aggregate ${i + 1}: field`, focus: `${a.id}:field`, placeholder: a.aggregator === "Count" ? "(rows)" : "field…", allowEmpty: a.aggregator === "Count",
          onchange: (path) => { a.field = path; refresh(); ctx.changed("structure", `${a.id}:field`); } }),
        h("label", { for: aliasId, class: "inline" }, "as"),
        h("input", { id: aliasId, type: "text", value: a.alias, size: 12, focus: `${a.id}:alias`, "aria-label": `Aggregate ${i + 1}: alias`,
          oninput: (e) => { a.alias = e.target.value; a.autoAlias = false; ctx.changed("value"); }, onchange: () => ctx.changed("structure") }),
        h("button", { type: "button", class: "icon", "aria-label": `Remove aggregate ${i + 1}`, focus: `${a.id}:remove`, onclick: () => { query.aggregates.splice(i, 1); ctx.changed("structure", "aggregates:add"); } }, "×"),
        errorNote(ctx.errors, a.id));
    })),
    h("button", { type: "button", focus: "aggregates:add", onclick: () => { const a = { id: newId("a"), aggregator: "Count", field: "", alias: uniqueAlias("count") }; query.aggregates.push(a); ctx.changed("structure", `${a.id}:aggregator`); } }, "+ Aggregate"));
}

/** An aggregate as a field Having can test: numbers for counts, sums and averages, else the field's own type. */
function havingField(aggregate, schema) {
  const field = aggregate.field ? schema.field(aggregate.field) : null;
  const numeric = numericAggregators.has(aggregate.aggregator) || !field;
  return {
    path: aggregate.alias.trim(), label: aggregate.alias.trim(), description: null, allowedValues: null,
    dataType: numeric ? "Number" : field.dataType,
    operators: numeric ? numericOperators : field.operators.filter((op) => !patternTests.has(operators[op]?.test)),
  };
}
