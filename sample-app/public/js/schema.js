// The schema client: what POST /qp-admin/schema says this caller may do on one entity, as a
// flat list of fields and navigation nodes (each hanging under its `parent`), with navigations
// opened on demand by asking for their subtree (`paths`).
import { api } from "./api.js";

const byOrder = (a, b) => (a.order ?? 1e9) - (b.order ?? 1e9) || a.label.localeCompare(b.label);

export class Schema {
  constructor(entity, response) {
    this.entity = entity;
    this.maxCost = response.maxCost ?? null;
    this.maxDepth = response.maxDepth;
    this.fields = new Map();
    this.nodes = new Map();
    /** Navigations whose own fields are loaded. */
    this.opened = new Set();
    this.merge(response);
  }

  /**
   * Loads the entity's own fields and the fields of every navigation in `opened` in one request
   * (depth 1 from each root: a navigation's fields come when someone opens it).
   */
  static async load(token, entity, opened = []) {
    const response = await api.schema(token, entity, ["", ...opened], 1);
    return new Schema(entity, response);
  }

  /** Opens a navigation: asks for its subtree and adds what comes back. */
  async open(token, path) {
    this.merge(await api.schema(token, this.entity, [path], 1));
  }

  merge(response) {
    for (const field of response.fields) this.fields.set(field.path, field);
    for (const node of response.nodes) if (!this.nodes.has(node.path) || node.expanded) this.nodes.set(node.path, node);
    for (const root of response.roots) if (root !== "") this.opened.add(root);
    for (const node of response.nodes) if (node.expanded) this.opened.add(node.path);
  }

  field(path) {
    return this.fields.get(path);
  }

  /** Can this navigation be opened (not yet loaded and the server says there is something to open)? */
  canOpen(node) {
    return !this.opened.has(node.path) && node.remainingDepth > 0;
  }

  /** "Contact › Email" for contact.email: the navigation labels on the way, then the field's. */
  label(path) {
    const field = this.fields.get(path);
    if (!field) return path;
    return field.parent ? `${this.nodeTrail(field.parent)} › ${field.label}` : field.label;
  }

  nodeTrail(path) {
    const trail = [];
    for (let node = this.nodes.get(path); node; node = this.nodes.get(node.parent)) trail.unshift(nodeLabel(node));
    return trail.join(" › ");
  }

  /** Fields that allow every one of `features`, as option groups: the entity's by QpDescribe group, then one group per navigation. */
  optionGroups(...features) {
    const groups = new Map();
    for (const field of this.fields.values()) {
      if (!features.every((f) => field.features.includes(f))) continue;
      const name = field.parent ? this.nodeTrail(field.parent) : field.group ?? "Other";
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(field);
    }
    // The entity's own groups first (in the order the schema lists them, "Other" last), then navigations.
    const rootFirst = [...groups.entries()].sort(([a, fa], [b, fb]) => Number(Boolean(fa[0].parent)) - Number(Boolean(fb[0].parent)) || Number(a === "Other") - Number(b === "Other"));
    return rootFirst.map(([label, fields]) => ({ label, fields: fields.sort(byOrder) }));
  }

  /** Children of a parent ("" = the entity) for the fields panel: fields by QpDescribe group ("Other" last), and navigations. */
  childrenOf(parent) {
    const groups = new Map();
    for (const field of this.fields.values()) {
      if (field.parent !== parent) continue;
      const name = field.group ?? "Other";
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(field);
    }
    const fieldGroups = [...groups.entries()].sort(([a], [b]) => Number(a === "Other") - Number(b === "Other")).map(([label, fields]) => ({ label, fields: fields.sort(byOrder) }));
    const nodes = [...this.nodes.values()].filter((n) => n.parent === parent).sort((a, b) => a.path.localeCompare(b.path));
    return { fieldGroups, nodes };
  }

  /** What one reference to `path` adds to the query's cost: the field's weight plus each navigation it crosses. */
  costOf(path) {
    const field = this.fields.get(path);
    return field ? field.pathCost ?? field.cost : 0;
  }
}

/** A navigation's name for people: its last path segment, capitalized ("orders.customer" → "Customer"). */
export function nodeLabel(node) {
  const last = node.path.slice(node.path.lastIndexOf(".") + 1);
  return last[0].toUpperCase() + last.slice(1);
}

/** How the values of a field reach this caller, from the schema's transform chain: the strongest marker wins. */
/** Trace actions that say a column's values were transformed on output (a mask, a generalization, a default or a mutation). */
export const transformActions = new Set(["Masked", "Generalized", "Defaulted", "Mutated"]);

export function markerOf(field) {
  const steps = field?.transforms ?? [];
  const has = (prefix) => steps.find((s) => s === prefix || s.startsWith(`${prefix}:`));
  if (has("Mask:Hash")) return { kind: "hashed", text: "hashed", detail: "HMAC-SHA256: equal values give equal hashes" };
  if (has("Mask:Tokenize")) return { kind: "tokenized", text: "tokenized", detail: "a vault token: equal values give equal tokens" };
  if (has("Default")) return { kind: "withheld", text: "withheld", detail: "replaced by a fixed value" };
  const mask = has("Mask");
  if (mask) return { kind: "masked", text: "masked", detail: `mask strategy ${mask.slice(5)}` };
  const generalize = has("Generalize");
  if (generalize) return { kind: "generalized", text: "generalized", detail: `generalized (${generalize.slice(11)})` };
  if (has("Truncate")) return { kind: "truncated", text: "truncated", detail: "shortened" };
  if (has("Format") || has("Mutate")) return { kind: "formatted", text: "formatted", detail: steps.join(", ") };
  return field?.masked ? { kind: "masked", text: "masked", detail: "transformed on output" } : null;
}
