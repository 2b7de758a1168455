// Field pickers: a <select> of the fields a caller may use for one purpose (Where, Select,
// Order, Group, Aggregate), grouped like the schema groups them. A value the caller may no
// longer use (another caller, say) stays visible and is marked, never silently replaced.
import { h } from "./dom.js";

/**
 * A field source: `groups` ([{ label, fields }]) and `find(path)`. From the schema for a set of
 * features, or from a plain list (Having's aliases).
 */
export function schemaSource(schema, ...features) {
  const groups = schema.optionGroups(...features);
  const allowed = new Map(groups.flatMap((g) => g.fields.map((f) => [f.path, f])));
  return { groups, find: (path) => allowed.get(path), label: (path) => schema.label(path) };
}

/** The same source without the fields `keep` refuses (groups left empty are dropped). */
export function filterSource(source, keep) {
  const groups = source.groups.map((g) => ({ ...g, fields: g.fields.filter(keep) })).filter((g) => g.fields.length > 0);
  return { ...source, groups, find: (path) => { const field = source.find(path); return field && keep(field) ? field : undefined; } };
}

export function listSource(label, fields) {
  const byPath = new Map(fields.map((f) => [f.path, f]));
  return { groups: fields.length ? [{ label, fields }] : [], find: (path) => byPath.get(path), label: (path) => byPath.get(path)?.label ?? path };
}

/** A <select> of fields. `value` "" shows `placeholder`; a value not in the source shows as unavailable. */
export function fieldSelect({ source, value, label, focus, onchange, placeholder = null, allowEmpty = false }) {
  const known = value === "" || source.find(value);
  const select = h("select", { "aria-label": label, focus, class: known ? "field-select" : "field-select unavailable", "aria-invalid": known ? null : "true", onchange: (e) => onchange(e.target.value) },
    placeholder !== null ? h("option", { value: "", disabled: !allowEmpty, selected: value === "" }, placeholder) : null,
    known ? null : h("option", { value, selected: true, disabled: true }, `${value} (not available to this caller)`),
    source.groups.map((g) => h("optgroup", { label: g.label }, g.fields.map((f) => h("option", { value: f.path, selected: f.path === value, title: f.description ?? null }, f.label)))));
  return select;
}

/** A list of chosen fields as removable chips, and a picker that adds one. */
export function chipList({ items, source, label, addLabel, keyPrefix, errors, onAdd, onRemove }) {
  const chosen = new Set(items.map((i) => i.path));
  const remaining = { ...source, groups: source.groups.map((g) => ({ ...g, fields: g.fields.filter((f) => !chosen.has(f.path)) })).filter((g) => g.fields.length) };
  return h("div", { class: "chips-editor" },
    h("ul", { class: "chips", "aria-label": label },
      items.map((item) => {
        const known = source.find(item.path);
        const text = known ? source.label(item.path) : `${item.path} (not available to this caller)`;
        return h("li", { class: known ? "chip" : "chip unavailable", "data-part": item.id },
          h("span", {}, text),
          h("button", { type: "button", class: "icon", "aria-label": `Remove ${text}`, focus: `${keyPrefix}:rm:${item.id}`, onclick: () => onRemove(item, `${keyPrefix}:add`) }, "×"),
          errorNote(errors, item.id));
      })),
    fieldSelect({ source: remaining, value: "", label: addLabel, focus: `${keyPrefix}:add`, placeholder: `+ ${addLabel}…`, onchange: (path) => path && onAdd(path) }));
}

/** The error shown next to a part (code and message), when the last run blamed it. */
export function errorNote(errors, id) {
  const error = errors.get(id);
  if (!error) return null;
  return h("p", { class: "error-note", role: "alert", "data-error-for": id },
    h("strong", { class: "error-code" }, error.errorCode ? `${error.code} (${error.errorCode})` : error.code), " ", h("span", { class: "error-message" }, error.message));
}
