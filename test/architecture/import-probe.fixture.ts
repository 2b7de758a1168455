// Not a test: a module the module-graph test reads to prove it sees every kind of import.
// import { nothing } from "../../lib/model/entity-model.js"; (a comment: not an import)
import type { Filter } from "../../lib/shapes/shapes.js";
import {
  type Operator,
} from "../../lib/shapes/enums.js";
export type { Codes } from "../../lib/errors/codes.js";

/* import "../../lib/plan/nodes.js"; */
export type Probe = [Filter, Operator, import("../../lib/shapes/policy-context.js").QpSubject, import("../../lib/pipeline/source.js").QuerySource<object>];
export const text = 'import "../../lib/memory/values.js"';
// Written without spaces, as no formatter here forbids:
export*from"../../lib/limits/caps.js";
import{type FilterPlan}from"../../lib/plan/nodes.js";
export type Tight = FilterPlan;
