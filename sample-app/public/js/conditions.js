// The condition editor shared by every mode: a group joins its conditions and sub-groups with
// AND or OR, to any depth. Each condition picks a field the caller may filter on, an operator
// the schema offers for it, and values in the input its data type calls for.
import { h } from "./dom.js";
import { initialValues, newCondition, newGroup } from "./model.js";
import { errorNote, fieldSelect } from "./pickers.js";
import { valueEditor } from "./values.js";

const operatorLabels = {
  Equal: "equals", IEqual: "equals (any case)", NotEqual: "is not", INotEqual: "is not (any case)",
  Contains: "contains", IContains: "contains (any case)", NotContains: "does not contain", INotContains: "does not contain (any case)",
  StartsWith: "starts with", IStartsWith: "starts with (any case)", NotStartsWith: "does not start with", INotStartsWith: "does not start with (any case)",
  EndsWith: "ends with", IEndsWith: "ends with (any case)", NotEndsWith: "does not end with", INotEndsWith: "does not end with (any case)",
  In: "is one of", IIn: "is one of (any case)", NotIn: "is none of", INotIn: "is none of (any case)",
  GreaterThan: ">", GreaterThanOrEqual: "≥", LessThan: "<", LessThanOrEqual: "≤", Between: "between", NotBetween: "not between", IsNull: "is empty", IsNotNull: "is not empty",
};

/**
 * ctx: { source (fields for conditions), errors (part id → error), changed(kind, focusKey?) }.
 * kind "structure" re-renders the editor; "value" only refreshes the JSON and the cost.
 */
export function groupEditor(group, ctx, { label = "Conditions", onRemove = null, depth = 0 } = {}) {
  const add = () => {
    const condition = newCondition(ctx.source.groups[0]?.fields[0]);
    group.conditions.push(condition);
    ctx.changed("structure", `${condition.id}:field`);
  };
  const addGroup = () => {
    const sub = newGroup(group.connector === "And" ? "Or" : "And");
    sub.conditions.push(newCondition(ctx.source.groups[0]?.fields[0]));
    group.groups.push(sub);
    ctx.changed("structure", `${sub.conditions[0].id}:field`);
  };
  return h("fieldset", { class: `group depth-${depth % 2}`, "data-part": group.id },
    h("legend", {},
      h("span", { class: "legend-text" }, label), " ",
      h("select", { "aria-label": `${label}: match`, focus: `${group.id}:connector`, class: "connector", onchange: (e) => { group.connector = e.target.value; ctx.changed("structure"); } },
        h("option", { value: "And", selected: group.connector === "And" }, "all of (AND)"),
        h("option", { value: "Or", selected: group.connector === "Or" }, "any of (OR)")),
      onRemove ? h("button", { type: "button", class: "icon", "aria-label": `Remove ${label.toLowerCase()}`, focus: `${group.id}:remove`, onclick: onRemove }, "×") : null),
    errorNote(ctx.errors, group.id),
    group.conditions.length || group.groups.length ? null : h("p", { class: "hint" }, "No conditions: every row matches."),
    h("ul", { class: "conditions" }, group.conditions.map((c, i) => conditionRow(c, group, i, ctx))),
    group.groups.map((sub, i) => groupEditor(sub, ctx, {
      label: `Group ${i + 1}`, depth: depth + 1,
      onRemove: () => { group.groups.splice(i, 1); ctx.changed("structure", `${group.id}:add-group`); },
    })),
    h("div", { class: "group-actions" },
      h("button", { type: "button", focus: `${group.id}:add`, onclick: add, disabled: ctx.source.groups.length === 0 }, "+ Condition"),
      h("button", { type: "button", focus: `${group.id}:add-group`, onclick: addGroup, disabled: ctx.source.groups.length === 0 }, "+ Group")));
}

function conditionRow(condition, group, index, ctx) {
  const field = ctx.source.find(condition.field);
  const operators = field ? field.operators : [condition.operator];
  const setField = (path) => {
    const next = ctx.source.find(path);
    if (!next) return;
    const sameValues = next.dataType === condition.dataType && JSON.stringify(next.allowedValues) === JSON.stringify(field?.allowedValues);
    condition.field = path;
    condition.dataType = next.dataType;
    if (!next.operators.includes(condition.operator)) condition.operator = next.operators[0];
    condition.values = initialValues(condition.operator, sameValues ? condition.values : []);
    ctx.changed("structure", `${condition.id}:field`);
  };
  const setOperator = (operator) => {
    condition.operator = operator;
    condition.values = initialValues(operator, condition.values);
    ctx.changed("structure", `${condition.id}:op`);
  };
  const text = field ? ctx.source.label(condition.field) : condition.field;
  return h("li", { class: field ? "condition" : "condition unavailable", "data-part": condition.id },
    h("div", { class: "condition-controls" },
      fieldSelect({ source: ctx.source, value: condition.field, label: `Condition ${index + 1}: field`, focus: `${condition.id}:field`, onchange: setField }),
      h("select", { "aria-label": `Condition ${index + 1}: operator`, focus: `${condition.id}:op`, class: "operator", disabled: !field, onchange: (e) => setOperator(e.target.value) },
        operators.map((op) => h("option", { value: op, selected: op === condition.operator }, operatorLabels[op] ?? op))),
      valueEditor(condition, field, {
        focus: condition.id,
        onInput: (values) => { condition.values = values; ctx.changed("value"); },
        onStructure: (values) => { condition.values = values; ctx.changed("structure"); },
      }),
      h("button", { type: "button", class: "icon", "aria-label": `Remove condition ${index + 1} (${text})`, focus: `${condition.id}:remove`,
        onclick: () => { group.conditions.splice(index, 1); ctx.changed("structure", `${group.id}:add`); } }, "×")),
    field ? (field.description ? h("p", { class: "hint" }, field.description) : null)
      : h("p", { class: "hint warn" }, `${condition.field} is not available to this caller; the server will refuse it.`),
    errorNote(ctx.errors, condition.id));
}
