// The JSON bodies of the admin API, validated with class-validator. Keys are read
// case-insensitively (`{"Entity": …}` works, like every QueryLib shape); an unknown key, a
// wrong type or a missing member is a 400 `InvalidRequestBody` naming each problem.
import {
  ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf,
  type ValidationError, validate,
} from "class-validator";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpSubjectKind } from "../../lib/index.js";
import { QpHttpError, requireJsonObject } from "../errors.js";

// class-validator runs a property's constraints in the order they are registered, i.e. from the
// decorator nearest the property outwards; the type check sits nearest, so with stopAtFirstError a
// wrong type is reported as such ("depth must be an integer"), not as a range problem.

export class SchemaRequestDto {
  @MaxLength(200) @IsNotEmpty() @IsString() entity!: string;
  @IsOptional() @MaxLength(400, { each: true }) @IsString({ each: true }) @ArrayMaxSize(100) @IsArray() paths?: string[];
  @IsOptional() @Min(1) @IsInt({ message: "depth must be an integer" }) depth?: number;
}

export class ExplainRequestDto {
  @MaxLength(200) @IsNotEmpty() @IsString() entity!: string;
  @IsOptional() @MaxLength(400) @IsNotEmpty() @IsString() field?: string;
  @IsOptional() @MaxLength(400, { each: true }) @IsString({ each: true }) @ArrayMaxSize(100) @IsArray() paths?: string[];
  @IsOptional() @Min(1) @IsInt({ message: "depth must be an integer" }) depth?: number;
}

export class SimulateRequestDto {
  @MaxLength(200) @IsNotEmpty() @IsString() entity!: string;
  @IsObject({ message: "filter must be a Filter object" }) @IsDefined({ message: "filter is required (a Filter object)" }) filter!: Record<string, unknown>;
}

const featureMessage = "features must be PolicyFeature flags: a number from 1 to 63, a name such as \"Select\", names joined by | or , or a list of names";

export class RuleRequestDto {
  @IsOptional() @Matches(/^[A-Za-z0-9._:-]{1,64}$/, { message: "id must be 1 to 64 letters, digits or . _ : -" }) @IsString() id?: string;
  @IsIn(Object.values(QpSubjectKind), { message: `subjectKind must be one of ${Object.values(QpSubjectKind).join(", ")}` }) subjectKind!: QpSubjectKind;
  @IsOptional() @ValidateIf((_, value) => value !== null) @MaxLength(200) @IsString() subject?: string | null;
  @MaxLength(200) @IsNotEmpty() @IsString() entity!: string;
  @MaxLength(400) @IsNotEmpty() @IsString() field!: string;
  @IsOptional() @Max(63, { message: featureMessage }) @Min(1, { message: featureMessage }) @IsInt({ message: featureMessage }) features?: number;
  @IsIn(Object.values(PolicyEffect), { message: `effect must be one of ${Object.values(PolicyEffect).join(", ")}` }) effect!: PolicyEffect;
  @IsOptional() @ValidateIf((_, value) => value !== null) @IsObject({ message: "mask must be an object { strategy, … } (QpMask options)" }) mask?: Record<string, unknown> | null;
  @IsOptional() @ValidateIf((_, value) => value !== null) @IsObject({ message: "private must be an object { lower, upper, granularity, epsilon? } (QpPrivate options)" }) private?: Record<string, unknown> | null;
  @IsOptional() @IsInt() priority?: number;
  @IsOptional() @ValidateIf((_, value) => value !== null) @MaxLength(400) @IsString() description?: string | null;
  /** Read-only: the findings an earlier upsert answered with. Accepted so that a rule read back can be sent again; ignored. */
  @IsOptional() lint?: unknown;
}

const members = new Map<Function, readonly string[]>([
  [SchemaRequestDto, ["entity", "paths", "depth"]],
  [ExplainRequestDto, ["entity", "field", "paths", "depth"]],
  [SimulateRequestDto, ["entity", "filter"]],
  [RuleRequestDto, ["id", "subjectKind", "subject", "entity", "field", "features", "effect", "mask", "private", "priority", "description", "lint"]],
]);

const enumMember = (value: unknown, names: readonly string[]) =>
  typeof value === "string" ? names.find((n) => n.toLowerCase() === value.trim().toLowerCase()) ?? value : value;

/** `2`, `"2"`, `"Select"`, `"Where|Order"`, `"Where, Order"`, `["Where", "Order"]` → flags; anything else is left for the validator to refuse. */
export function featuresOf(value: unknown): unknown {
  if (typeof value === "number") return value;
  const parts = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[|,]/) : null;
  if (!parts || parts.length === 0) return value;
  let flags = 0;
  for (const part of parts) {
    if (typeof part === "number" && Number.isInteger(part)) flags |= part;
    else if (typeof part === "string" && /^\s*\d+\s*$/.test(part)) flags |= Number(part);
    else if (typeof part === "string") {
      const name = Object.keys(PolicyFeature).find((k) => Number.isNaN(Number(k)) && k.toLowerCase() === part.trim().toLowerCase());
      if (!name) return value;
      flags |= PolicyFeature[name as keyof typeof PolicyFeature];
    } else return value;
  }
  return flags;
}

/** The cross-member rules of a rule's shape; the engine checks them too, but a malformed rule is a 400, not a refusal (409). */
function ruleShapeProblems(rule: Record<string, unknown>): { property: string; problems: string[] }[] {
  const problems: { property: string; problems: string[] }[] = [];
  const hasSubject = rule.subject !== undefined && rule.subject !== null && rule.subject !== "";
  if (rule.subjectKind === QpSubjectKind.Global && hasSubject) problems.push({ property: "subject", problems: ["a Global rule has no subject"] });
  if (typeof rule.subjectKind === "string" && rule.subjectKind !== QpSubjectKind.Global && Object.values(QpSubjectKind).includes(rule.subjectKind as QpSubjectKind) && !hasSubject) {
    problems.push({ property: "subject", problems: [`a ${rule.subjectKind} rule needs a subject`] });
  }
  const mask = rule.mask as Record<string, unknown> | null | undefined;
  if (rule.effect === PolicyEffect.Mask && (mask === undefined || mask === null)) problems.push({ property: "mask", problems: ["a Mask rule needs mask settings { strategy, … }"] });
  if (rule.effect !== PolicyEffect.Mask && mask !== undefined && mask !== null) problems.push({ property: "mask", problems: ["only a Mask rule carries mask settings"] });
  if (mask && typeof mask === "object" && !Array.isArray(mask) && !Object.values(MaskStrategy).includes(mask.strategy as MaskStrategy)) {
    problems.push({ property: "mask.strategy", problems: [`mask.strategy must be one of ${Object.values(MaskStrategy).join(", ")}`] });
  }
  return problems;
}

const forbiddenKeys = new Set(["__proto__", "constructor", "prototype"]);

function describe(errors: readonly ValidationError[], prefix = ""): { property: string; problems: string[] }[] {
  return errors.flatMap((e) => [
    ...(e.constraints ? [{ property: prefix + e.property, problems: Object.values(e.constraints) }] : []),
    ...describe(e.children ?? [], `${prefix}${e.property}.`),
  ]);
}

/** Reads a body into a DTO: object check, case-insensitive keys, normalized enum names, class-validator. */
export async function readBody<T extends object>(type: new () => T, body: unknown): Promise<T> {
  const fields = requireJsonObject(body);
  const known = members.get(type) ?? [];
  const instance = new type() as Record<string, unknown>;
  const problems: { property: string; problems: string[] }[] = [];
  for (const [key, value] of Object.entries(fields)) {
    const canonical = forbiddenKeys.has(key) ? undefined : known.find((m) => m.toLowerCase() === key.toLowerCase());
    if (!canonical) {
      problems.push({ property: key, problems: [`property ${key} should not exist (expected ${known.join(", ")})`] });
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(instance, canonical)) {
      problems.push({ property: key, problems: [`property ${canonical} is given twice (keys are case-insensitive)`] });
      continue;
    }
    instance[canonical] = value;
  }
  if (type === (RuleRequestDto as unknown)) {
    if ("subjectKind" in instance) instance.subjectKind = enumMember(instance.subjectKind, Object.values(QpSubjectKind));
    if ("effect" in instance) instance.effect = enumMember(instance.effect, Object.values(PolicyEffect));
    if ("features" in instance && instance.features !== undefined) instance.features = featuresOf(instance.features);
    const mask = instance.mask as Record<string, unknown> | null | undefined;
    if (mask && typeof mask === "object" && !Array.isArray(mask) && "strategy" in mask) instance.mask = { ...mask, strategy: enumMember(mask.strategy, Object.values(MaskStrategy)) };
  }
  if (type === (RuleRequestDto as unknown)) problems.push(...ruleShapeProblems(instance));
  const errors = await validate(instance, { forbidUnknownValues: false, stopAtFirstError: true, validationError: { target: false, value: false } });
  problems.push(...describe(errors));
  if (problems.length > 0) {
    throw new QpHttpError(400, "InvalidRequestBody", problems.flatMap((p) => p.problems).join("; "), problems);
  }
  return instance as T;
}
