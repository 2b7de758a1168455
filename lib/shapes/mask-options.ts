// The options a mask strategy may read, each with its kind: one table that MaskOptions'
// fields (lib/registry/qp-registry.ts) and their checks (lib/transform/mask-checks.ts, one check
// per kind) are made from. A strategy's row (lib/transform/strategies.ts, maskStrategies) names
// the options it reads; a new option is a line here, and the type checker asks for nothing else
// unless it is of a new kind.

/** How an option's value is checked: `count` an integer ≥ 0, `grapheme` one user-perceived character, `pattern` an RE2 pattern, `flag` and `text` as given. */
export type MaskOptionKind = "count" | "grapheme" | "pattern" | "flag" | "text";

/** Every mask option and its kind, in the order their checks run. */
export const maskOptionKinds = {
  pattern: "pattern",
  maskChar: "grapheme",
  keepStart: "count",
  keepEnd: "count",
  preserveLength: "flag",
  replacement: "text",
  text: "text",
  tokenScope: "text",
} as const satisfies Record<string, MaskOptionKind>;

export type MaskOptionName = keyof typeof maskOptionKinds;

interface ValueOfKind { count: number; grapheme: string; pattern: string; flag: boolean; text: string }

/** The mask options as the decorator and a rule take them (all optional; each strategy reads its own). */
export type MaskOptionValues = { readonly [K in MaskOptionName]?: ValueOfKind[(typeof maskOptionKinds)[K]] };
