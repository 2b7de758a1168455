// Transformation: QpMask, QpMutate, QpDefault, QpGeneralize, QpTruncate, QpFormat. They are
// recorded here and checked at configure time against the column they decorate.
import { GeneralizeMode } from "../lib/shapes/policy-enums.js";
import { fieldDecorator } from "./access.js";
import { maskOptionsProblem, transformOptionsProblem } from "../lib/transform/mask-checks.js";
import { type GeneralizeOptions, type IValueTransformer, type MaskOptions, QpDecoratorError, type TransformOptions } from "../lib/registry/qp-registry.js";

function checkTransform(target: Function, property: string, decorator: string, options: TransformOptions) {
  const problem = transformOptionsProblem(decorator, options);
  if (problem) throw new QpDecoratorError(target, property, problem.message, problem.code);
}

export function QpMask(options: MaskOptions) {
  return fieldDecorator("QpMask", options.overridable, (target, property) => {
    const problem = maskOptionsProblem(options);
    if (problem) throw new QpDecoratorError(target, property, problem.message, problem.code);
    return { kind: "mask", options };
  });
}

export function QpMutate(transformer: new () => IValueTransformer, options: TransformOptions = {}) {
  return fieldDecorator("QpMutate", options.overridable, (target, property) => {
    if (typeof transformer !== "function" || typeof transformer.prototype?.transform !== "function") {
      throw new QpDecoratorError(target, property, "QpMutate needs a class implementing IValueTransformer (transform(value, context))");
    }
    checkTransform(target, property, "QpMutate", options);
    return { kind: "mutate", transformer, options };
  });
}

export function QpDefault(value?: string, options: TransformOptions = {}) {
  return fieldDecorator("QpDefault", options.overridable, (target, property) => {
    checkTransform(target, property, "QpDefault", options);
    return { kind: "default", value, options };
  });
}

/** A calendar date "YYYY-MM-DD" that exists (no 2023-02-30). */
const isoDate = (value: unknown): value is string =>
  typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);

export function QpGeneralize(options: GeneralizeOptions) {
  return fieldDecorator("QpGeneralize", options.overridable, (target, property) => {
    if (!Object.values(GeneralizeMode).includes(options.mode)) throw new QpDecoratorError(target, property, `QpGeneralize names an unknown mode "${options.mode}"`);
    if ((options.mode === GeneralizeMode.Bucket || options.mode === GeneralizeMode.Round) && options.step !== undefined && !(options.step > 0)) {
      throw new QpDecoratorError(target, property, "QpGeneralize step must be greater than 0");
    }
    if (options.mode === GeneralizeMode.Bucket && options.step === undefined) throw new QpDecoratorError(target, property, "QpGeneralize Bucket needs a step");
    if (options.mode === GeneralizeMode.DatePart && !options.part) throw new QpDecoratorError(target, property, "QpGeneralize DatePart needs a part");
    if ((options.lower === undefined) !== (options.upper === undefined)) throw new QpDecoratorError(target, property, "QpGeneralize lower and upper go together");
    if (options.lower !== undefined && (options.mode === GeneralizeMode.DatePart || options.mode === GeneralizeMode.Truncate)) {
      if (!isoDate(options.lower) || !isoDate(options.upper) || !(options.lower <= options.upper!)) {
        throw new QpDecoratorError(target, property, "QpGeneralize lower and upper of a DatePart or Truncate are ISO dates (YYYY-MM-DD), lower at most upper");
      }
    } else if (options.lower !== undefined && (options.mode !== GeneralizeMode.Bucket || typeof options.lower !== "number" || typeof options.upper !== "number" || !Number.isFinite(options.lower) || !Number.isFinite(options.upper) || !(options.lower <= options.upper))) {
      throw new QpDecoratorError(target, property, "QpGeneralize lower and upper are finite bounds of a Bucket (or ISO dates of a DatePart or Truncate), lower at most upper");
    }
    if (options.decimals !== undefined && (!Number.isInteger(options.decimals) || options.decimals < 0)) {
      throw new QpDecoratorError(target, property, "QpGeneralize decimals must be an integer of at least 0");
    }
    checkTransform(target, property, "QpGeneralize", options);
    return { kind: "generalize", options };
  });
}

export function QpTruncate(length: number, options: TransformOptions & { ellipsis?: string } = {}) {
  return fieldDecorator("QpTruncate", options.overridable, (target, property) => {
    if (!Number.isInteger(length) || length < 1) throw new QpDecoratorError(target, property, "QpTruncate length must be an integer of at least 1");
    checkTransform(target, property, "QpTruncate", options);
    return { kind: "truncate", length, ellipsis: options.ellipsis ?? "...", options };
  });
}

export function QpFormat(format: string, options: TransformOptions = {}) {
  return fieldDecorator("QpFormat", options.overridable, (target, property) => {
    if (typeof format !== "string" || format === "") throw new QpDecoratorError(target, property, "QpFormat needs a format string");
    checkTransform(target, property, "QpFormat", options);
    return { kind: "format", format, options };
  });
}
