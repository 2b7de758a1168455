// The schema as a tree: the entity's fields grouped and labelled by QpDescribe, what each one
// allows, and its navigations, opened on demand (a subtree request per navigation).
import { h } from "./dom.js";
import { markerOf, nodeLabel } from "./schema.js";

const featureLetters = [["Where", "W", "filter"], ["Select", "S", "show"], ["Order", "O", "sort"], ["Group", "G", "group"], ["Aggregate", "A", "aggregate"], ["Segment", "Sg", "segment sets"]];

export function fieldsPanel(schema, { onOpen, loading }) {
  return h("nav", { class: "fields-panel", "aria-label": "Fields" },
    h("h2", {}, "Fields"),
    h("p", { class: "hint" }, "What this caller may use. W filter · S show · O sort · G group · A aggregate."),
    level(schema, "", { onOpen, loading }));
}

function level(schema, parent, options) {
  const { fieldGroups, nodes } = schema.childrenOf(parent);
  return h("div", { class: "level" },
    fieldGroups.map(({ label, fields }) => h("div", { class: "field-group" },
      h("h3", {}, label),
      h("ul", {}, fields.map((f) => fieldItem(f))))),
    nodes.length ? h("ul", { class: "nodes" }, nodes.map((node) => nodeItem(schema, node, options))) : null);
}

function fieldItem(field) {
  const marker = markerOf(field);
  return h("li", { class: "field", "data-path": field.path, title: [field.path, field.description].filter(Boolean).join(" · ") },
    h("span", { class: "field-name" },
      h("span", { class: "field-label" }, field.label), " ",
      h("span", { class: "type" }, field.dataType ?? "?"),
      marker ? h("span", { class: `marker ${marker.kind}` }, marker.text) : null,
      field.cost !== 1 ? h("span", { class: "cost", title: "cost of one use against the query budget" }, ` cost ${field.cost}`) : null),
    h("span", { class: "features", title: `allows ${featureLetters.filter(([f]) => field.features.includes(f)).map(([, , t]) => t).join(", ")}` },
      featureLetters.filter(([f]) => field.features.includes(f)).map(([, letter]) => letter).join(" ")));
}

function nodeItem(schema, node, options) {
  const opened = schema.opened.has(node.path);
  const busy = options.loading === node.path;
  const label = nodeLabel(node);
  return h("li", { class: "node", "data-node": node.path },
    opened
      ? h("details", { open: true }, h("summary", {}, `${label} (${node.entity})`), level(schema, node.path, options))
      : h("button", { type: "button", class: "open-node", focus: `node:${node.path}`, disabled: busy || !schema.canOpen(node), "aria-busy": busy ? "true" : null, onclick: () => options.onOpen(node),
        title: node.remainingDepth > 0 ? `load the fields of ${label} (up to ${node.remainingDepth} more levels)` : "nothing more may be opened here" },
      busy ? `Loading ${label}…` : `▸ ${label} (${node.entity})`));
}
