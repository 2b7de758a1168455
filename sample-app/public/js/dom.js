// A tiny element builder: h("button", { class: "x", onclick }, "text", child, …). Properties
// named on* become listeners, `focus` becomes data-focus (the key render() restores focus
// by), booleans and `value` are set as properties, everything else as attributes.
const properties = new Set(["value", "checked", "selected", "disabled", "multiple", "hidden", "open", "required", "indeterminate"]);

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false && !properties.has(name)) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "focus") element.dataset.focus = value;
    else if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (properties.has(name)) element[name] = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children, keeping keyboard focus on the control with the same data-focus key. */
export function replaceChildren(container, children, focusKey = document.activeElement?.dataset?.focus) {
  const active = document.activeElement;
  const selection = active && "selectionStart" in active ? [active.selectionStart, active.selectionEnd] : null;
  container.replaceChildren(...[children].flat().filter(Boolean));
  if (!focusKey) return;
  const next = container.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
  if (!next || next === document.activeElement) return;
  next.focus();
  if (selection && "setSelectionRange" in next && next.type === "text") next.setSelectionRange(...selection);
}

let counter = 0;
/** A unique id for label/control pairs. */
export const uid = (prefix = "id") => `${prefix}-${++counter}`;
