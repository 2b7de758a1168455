// A private numeric field's declared settings (QpPrivate, or a Private rule): the public bounds
// each contribution is clamped to, the granularity the noise is counted in, and the ε one
// aggregate of it costs. Bounds are declared, never read from the data: bounds inferred from the
// rows would themselves tell which values are there.

export interface QpPrivateOptions {
  /** Every contribution is clamped to [lower, upper] before it is summed. Public. */
  readonly lower: number;
  readonly upper: number;
  /** The unit the noise is drawn in (0.01 for cents): lower and upper are whole multiples of it. */
  readonly granularity: number;
  /** ε charged per aggregate of the field (default 0.5). */
  readonly epsilon?: number;
}

/** The settings as the policy uses them: epsilon filled in. */
export interface PrivateSettings {
  readonly lower: number;
  readonly upper: number;
  readonly granularity: number;
  readonly epsilon: number;
}

/** ε per aggregate when none is declared (Snowflake's default for its differential privacy policies). */
export const defaultPrivateEpsilon = 0.5;

/** The most granularity steps [lower, upper] may span: the noise is counted in safe integers. */
const maxSteps = 2 ** 52;

/** Whether x is a whole multiple of g, allowing for the binary rounding of decimal steps (0.3 / 0.1). */
function multipleOf(x: number, g: number): boolean {
  const q = x / g;
  return Math.abs(q - Math.round(q)) <= 1e-9 * Math.max(1, Math.abs(q));
}

/**
 * Why the settings cannot be used, or null. The same words for the decorator (checked at
 * startup, validate-policy.ts) and for a Private rule (refused on write).
 */
export function privateOptionsProblem(options: unknown): string | null {
  if (options === null || typeof options !== "object" || Array.isArray(options)) return "private settings must be an object { lower, upper, granularity, epsilon? }";
  const { lower, upper, granularity, epsilon } = options as Record<string, unknown>;
  const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
  if (!finite(lower) || !finite(upper)) return "private lower and upper must be finite numbers";
  if (!(lower < upper)) return `private lower (${lower}) must be below upper (${upper})`;
  if (!finite(granularity) || granularity <= 0) return "private granularity must be a finite number above 0";
  if (!multipleOf(lower, granularity) || !multipleOf(upper, granularity)) {
    return `private lower (${lower}) and upper (${upper}) must be whole multiples of granularity (${granularity}): the noise is drawn in units of it`;
  }
  if ((upper - lower) / granularity > maxSteps) return `private bounds span more than 2^52 steps of granularity (${granularity})`;
  if (epsilon !== undefined && (!finite(epsilon) || epsilon <= 0)) return "private epsilon must be a finite number above 0";
  const known = new Set(["lower", "upper", "granularity", "epsilon", "overridable"]);
  const unknown = Object.keys(options).find((key) => !known.has(key));
  if (unknown) return `private settings have an unknown key "${unknown}" (lower, upper, granularity, epsilon)`;
  return null;
}

/** Valid settings with epsilon filled in (the caller checked them with privateOptionsProblem). */
export function privateSettingsOf(options: QpPrivateOptions): PrivateSettings {
  return { lower: options.lower, upper: options.upper, granularity: options.granularity, epsilon: options.epsilon ?? defaultPrivateEpsilon };
}
