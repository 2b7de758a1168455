// "Policy health" for admins (the admin API's write policy): what the policy linter finds in the
// policy as configured now (GET /api/policy-health, the findings of GET /qp-admin/lint), errors first, each with who it concerns, why it
// is a hole and the smallest fix. Other callers (analysts included) never see the panel.
import { h } from "./dom.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function healthView(findings) {
  if (!findings) return null;
  const count = (severity) => findings.filter((f) => f.severity === severity).length;
  const summary = `${plural(count("error"), "error")}, ${plural(count("warning"), "warning")}, ${count("info")} info`;
  return h("section", { class: "health", "aria-label": "Policy health", "data-errors": String(count("error")) },
    h("h2", {}, "Policy health"),
    h("p", { class: "health-summary" }, `The policy linter: ${summary}.`),
    findings.length === 0 ? h("p", { class: "hint" }, "No finding: no caller can rank, probe or infer what it may not see.") : h("details", {},
      h("summary", {}, `All ${findings.length} findings`),
      h("ul", { class: "health-findings" }, findings.map((f) => h("li", { class: `severity-${f.severity}`, "data-code": f.code, "data-field": `${f.entity}.${f.field ?? ""}` },
        h("span", { class: "severity" }, f.severity), " ",
        h("strong", {}, f.code), ` ${f.entity}${f.field ? `.${f.field}` : ""}${f.feature ? ` (${f.feature})` : ""}, for ${f.subject}, by ${f.source}: ${f.why}. `,
        h("em", {}, `Fix: ${f.fix}`))))));
}
