// One metadata registry for every Qp* decorator, keyed by entity class and property. It is
// filled when classes are defined and read without TypeORM running; subclasses inherit.
import type { Operator } from "../shapes/enums.js";
import type { DatePart, GeneralizeMode, InferenceRisk, MaskStrategy, PolicyFeature } from "../shapes/policy-enums.js";
import type { MaskOptionValues } from "../shapes/mask-options.js";
import type { QpPrivateOptions } from "../privacy/private-options.js";

interface Common {
  /** The decorator's name, for traces and explanations ("QpDenied"). */
  readonly decorator: string;
  /** false: sealed, no runtime rule can lift it. */
  readonly overridable: boolean;
}

export interface TransformOptions {
  readonly allowAggregate?: boolean;
  readonly minGroupSize?: number;
  readonly overridable?: boolean;
  /** Under inferenceProtection, the restrictions this field explicitly does without (the trace says so on each such use). */
  readonly acceptInferenceRisks?: readonly InferenceRisk[];
}

/** A QpMask's (or a Mask rule's) settings: the strategy and its options (lib/shapes/mask-options.ts). */
export interface MaskOptions extends TransformOptions, MaskOptionValues {
  readonly strategy: MaskStrategy;
}

export interface GeneralizeOptions extends TransformOptions {
  readonly mode: GeneralizeMode;
  readonly step?: number;
  readonly part?: DatePart;
  readonly decimals?: number;
  /**
   * The public range of the field's values (both or neither): numbers for a Bucket, ISO dates
   * ("2024-01-31") for a DatePart or a date Truncate. A private Summary grouped by the field
   * releases every bucket from lower's to upper's, empty ones too, as declared keys (#45); without
   * them (nor, for a Bucket, QpPrivate bounds) its buckets are free-form keys.
   */
  readonly lower?: number | string;
  readonly upper?: number | string;
}

export interface IValueTransformer {
  transform(value: unknown, context: unknown): unknown;
}

export type QpAttribute = Common & (
  | { readonly kind: "access"; readonly features: PolicyFeature }
  | { readonly kind: "operators"; readonly allow: readonly Operator[] | null; readonly deny: readonly Operator[] }
  | { readonly kind: "alias"; readonly name: string }
  | { readonly kind: "forceWhere"; readonly operator: Operator; readonly value?: string; readonly contextValue?: string }
  | { readonly kind: "requireWhere"; readonly operators: readonly Operator[] | null }
  | { readonly kind: "mask"; readonly options: MaskOptions }
  | { readonly kind: "mutate"; readonly transformer: new () => IValueTransformer; readonly options: TransformOptions }
  | { readonly kind: "default"; readonly value: string | undefined; readonly options: TransformOptions }
  | { readonly kind: "generalize"; readonly options: GeneralizeOptions }
  | { readonly kind: "truncate"; readonly length: number; readonly ellipsis: string; readonly options: TransformOptions }
  | { readonly kind: "format"; readonly format: string; readonly options: TransformOptions }
  | { readonly kind: "describe"; readonly label?: string; readonly description?: string; readonly group?: string; readonly order?: number }
  | { readonly kind: "allowedValues"; readonly values: readonly string[] }
  | { readonly kind: "cost"; readonly weight: number }
  | { readonly kind: "audit"; readonly features: PolicyFeature }
  /** QpPrivate: aggregated only with noise, within public bounds (checked at startup: validate-policy.ts). */
  | { readonly kind: "private"; readonly options: QpPrivateOptions }
);

/** A member's attributes as the policy reads them (decisions/entity-policy.ts builds them per class). */
export interface MemberPolicy {
  readonly owner: Function;
  readonly property: string;
  readonly attributes: readonly QpAttribute[];
  readonly alias: string | null;
}

export interface QpEntityOptions {
  readonly requirePolicy?: boolean;
  readonly overridable?: boolean;
}

interface ClassRecord {
  entity: QpEntityOptions | null;
  readonly fields: Map<string, QpAttribute[]>;
}

/** Misuse of a decorator; the message names the class and property, `code` the kind of misuse. */
export class QpDecoratorError extends Error {
  constructor(target: Function, property: string | null, message: string, readonly code = "InvalidDecorator") {
    super(`${target.name}${property ? `.${property}` : ""}: ${message}`);
    this.name = "QpDecoratorError";
  }
}

class QpMetadataRegistry {
  private readonly classes = new Map<Function, ClassRecord>();
  private version = 0;

  private record(target: Function): ClassRecord {
    let record = this.classes.get(target);
    if (!record) this.classes.set(target, (record = { entity: null, fields: new Map() }));
    return record;
  }

  addField(target: Function, property: string, attribute: QpAttribute): void {
    const record = this.record(target);
    record.fields.set(property, [...(record.fields.get(property) ?? []), attribute]);
    this.version++;
  }

  setEntity(target: Function, options: QpEntityOptions): void {
    this.record(target).entity = options;
    this.version++;
  }

  /** Bumped on every registration, so compiled policies know when to rebuild. */
  get changeCount(): number {
    return this.version;
  }

  /** Attributes of a property, the class's own first, then inherited ones. */
  fieldAttributes(target: Function, property: string): QpAttribute[] {
    return lineage(target).flatMap((c) => this.classes.get(c)?.fields.get(property) ?? []);
  }

  /** Every decorated property of a class and its ancestors. */
  fields(target: Function): Map<string, QpAttribute[]> {
    const result = new Map<string, QpAttribute[]>();
    for (const c of lineage(target)) {
      for (const [property, attributes] of this.classes.get(c)?.fields ?? []) result.set(property, [...(result.get(property) ?? []), ...attributes]);
    }
    return result;
  }

  entityOptions(target: Function): QpEntityOptions | null {
    for (const c of lineage(target)) {
      const entity = this.classes.get(c)?.entity;
      if (entity) return entity;
    }
    return null;
  }

  /** True when a decorator of this copy of QueryLib recorded something on the class or an ancestor. */
  knows(target: Function): boolean {
    return lineage(target).some((c) => this.classes.has(c));
  }
}

function lineage(target: Function): Function[] {
  const chain: Function[] = [];
  for (let c: unknown = target; typeof c === "function" && c !== Function.prototype; c = Object.getPrototypeOf(c)) chain.push(c as Function);
  return chain;
}

export const qpRegistry = new QpMetadataRegistry();

/**
 * Every copy of QueryLib loaded in the process, with the file its registry was loaded from: an
 * application with two copies in node_modules (one its entities' decorators imported, another the
 * linter runs from) records its decorators in one registry and lints with the other, which would
 * see no policy at all. The command-line linter looks here to say so instead (lib/cli/querylib.ts).
 */
export interface QpLoadedCopy {
  readonly registryUrl: string;
  readonly registry: { knows(target: Function): boolean };
}
const copiesKey = Symbol.for("querylib.loadedCopies");
const copies: QpLoadedCopy[] = ((globalThis as Record<symbol, unknown>)[copiesKey] ??= []) as QpLoadedCopy[];
copies.push({ registryUrl: import.meta.url, registry: qpRegistry });

/** The copies of QueryLib loaded in this process (this one included). */
export function loadedQueryLibCopies(): readonly QpLoadedCopy[] {
  return copies;
}
export type { QpMetadataRegistry };
