// A private Summary's release (#45, docs/POLICY.md "Private aggregates"): under the results, what
// was noised and how much to trust it (each aggregate's 95 % interval), what the answer cost and
// what is left of the caller's privacy budget, and whether it is a stored (sticky) answer.
// Nothing here is a true value: the server sends none.
import { h } from "./dom.js";

const number = (x, digits = 2) => (typeof x === "number" ? x.toLocaleString("en", { maximumFractionDigits: digits }) : "—");

/** The ± half-width of an aggregate for a row (an Average's differs per group). */
function halfWidthOf(release, i) {
  return release.halfWidths95 ? release.halfWidths95[i] : release.halfWidth95;
}

/**
 * The panel of a result with a `privacy` block, or null. `rows`: the result's rows, for the
 * group of each Average's interval (its first key column names it).
 */
export function privacyPanel(result) {
  const privacy = result?.privacy;
  if (!privacy) return null;
  const groupName = (row) => Object.entries(row).filter(([key]) => !(key in privacy.aggregates)).map(([, value]) => String(value)).join(" · ") || "all";
  const budget = privacy.epsilonRemaining === null ? "budget left: unknown"
    : `ε left today: ${number(privacy.epsilonRemaining, 6)}${privacy.windowResetsAt ? ` (resets ${new Date(privacy.windowResetsAt).toISOString().slice(0, 16).replace("T", " ")} UTC)` : ""}`;
  const cost = privacy.cached ? "the stored answer of the same Summary: no ε charged" : `ε charged: ${number(privacy.epsilonCharged, 6)}`;
  return h("section", { class: "privacy", "aria-label": "Privacy of these aggregates", "data-cached": String(privacy.cached), "data-remaining": privacy.epsilonRemaining === null ? "" : String(privacy.epsilonRemaining) },
    h("h3", {}, "Private aggregates"),
    h("p", { class: "privacy-summary" }, `Noised (${privacy.mechanism}) · ${cost} · ${budget}`,
      privacy.threshold ? ` · groups shown when their noisy size reaches ${privacy.threshold.tau}` : ""),
    h("ul", { class: "privacy-aggregates" }, Object.entries(privacy.aggregates).map(([alias, release]) =>
      h("li", { "data-alias": alias },
        `${alias}: ${release.aggregator} of ${release.field}, clamped to [${number(release.lower)}, ${number(release.upper)}], ε ${release.epsilon}; 95 % interval `,
        release.halfWidths95
          ? result.data.map((row, i) => h("span", { class: "interval", "data-row": i }, `${groupName(row)}: ${number(row[alias])} ± ${number(halfWidthOf(release, i))}`)).reduce((all, span, i) => (i ? [...all, "; ", span] : [span]), [])
          : h("span", { class: "interval" }, `± ${number(release.halfWidth95)}`)))));
}
