// The value editor of one condition: what the operator needs (nothing, one value, two, or a
// list) in the input the data type calls for, and a pick list when the field has allowed values.
import { h } from "./dom.js";
import { arity } from "./model.js";

const inputTypes = { Number: "number", Date: "date", DateTime: "datetime-local" };

export function valueEditor(condition, field, { focus, onInput, onStructure }) {
  const n = arity(condition.operator);
  const allowed = field?.allowedValues ?? (condition.dataType === "Boolean" ? ["true", "false"] : null);
  if (n === 0) return h("span", { class: "no-value" }, "no value");
  if (n === "many" && allowed) {
    return h("select", { multiple: true, size: Math.min(allowed.length, 4), "aria-label": "Values", focus: `${focus}:v`, class: "values-list",
      onchange: (e) => onStructure([...e.target.selectedOptions].map((o) => o.value)) },
    allowed.map((v) => h("option", { value: v, selected: condition.values.includes(v) }, v)));
  }
  if (n === "many") {
    return h("input", { type: "text", value: condition.values.join(", "), "aria-label": "Values, separated by commas", placeholder: "a, b, c", focus: `${focus}:v`,
      oninput: (e) => onInput(e.target.value.split(",").map((v) => v.trim()).filter((v) => v !== "")) });
  }
  const one = (i, label) => allowed
    ? h("select", { "aria-label": label, focus: `${focus}:v${i}`, onchange: (e) => onStructure(condition.values.map((v, j) => (j === i ? e.target.value : v))) },
      h("option", { value: "", disabled: true, selected: condition.values[i] === "" }, "choose…"),
      allowed.map((v) => h("option", { value: v, selected: condition.values[i] === v }, v)))
    : h("input", { type: inputTypes[condition.dataType] ?? "text", step: condition.dataType === "Number" ? "any" : null, value: condition.values[i] ?? "", "aria-label": label, focus: `${focus}:v${i}`,
      oninput: (e) => onInput(condition.values.map((v, j) => (j === i ? e.target.value : v))) });
  if (n === 2) return h("span", { class: "between" }, one(0, "From"), h("span", {}, "and"), one(1, "To"));
  return one(0, "Value");
}
