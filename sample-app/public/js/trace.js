// The policy trace of the last run, read for a person: why a column is missing (dropped),
// which predicates the policy added (injected), what was transformed, and the cost against the budget.
import { h } from "./dom.js";
import { markerOf, transformActions } from "./schema.js";

function explain(entry, schema) {
  if (transformActions.has(entry.action)) return `${entry.field} is ${markerOf(schema?.field(entry.field))?.text ?? "transformed"} on output (${entry.source}).`;
  switch (entry.action) {
    case "Dropped": return `${entry.feature} of ${entry.field} was dropped: ${entry.reason ?? entry.source}`;
    case "Injected": return entry.feature === "Where"
      ? `A predicate on ${entry.field} was added to your conditions (${entry.source}): rows are scoped whatever you ask for.`
      : `${entry.feature} was added: ${entry.reason ?? entry.source}`;
    case "Denied": return `${entry.feature} of ${entry.field} was refused: ${entry.reason ?? entry.source}`;
    default: return null;
  }
}

export function traceView(trace, schema) {
  if (!trace) return null;
  const maxCost = schema?.maxCost;
  const notable = trace.entries.filter((e) => e.action !== "Allowed");
  return h("section", { class: "trace", "aria-label": "Policy trace" },
    h("h2", {}, "Policy trace"),
    h("p", { class: "trace-summary" },
      `Tier ${trace.tier}${trace.dryRun ? " (dry run)" : ""} · rules snapshot v${trace.snapshotVersion} · cost `,
      h("strong", { "data-cost": trace.cost }, String(trace.cost)), maxCost ? ` of ${maxCost}` : ""),
    notable.length ? h("ul", { class: "trace-notes" }, notable.map((e) => h("li", { class: `action-${e.action.toLowerCase()}`, "data-action": e.action, "data-field": e.field },
      h("span", { class: "action" }, e.action), " ", explain(e, schema)))) : h("p", { class: "hint" }, "Nothing was dropped, masked or added."),
    h("details", {}, h("summary", {}, `All ${trace.entries.length} entries`),
      h("div", { class: "table-wrap" }, h("table", {},
        h("thead", {}, h("tr", {}, ["Field", "Feature", "Action", "Level", "Source", "Reason"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, trace.entries.map((e) => h("tr", {}, [e.field, e.feature, e.action, e.level ?? "—", e.source, e.reason ?? ""].map((v) => h("td", {}, String(v))))))))));
}
