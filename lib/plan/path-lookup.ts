// Where a plan builder gets the path a request names at a place. Unguarded, the request's text
// is resolved by property names. Under a guard the policy has already resolved every field
// reference by public names (aliases) and decided on it: the plan is built from the caller's
// parsed request with those resolutions (guard/placements.ts), so each path is walked once and
// a use the policy dropped never enters the plan.
import type { EntityModel } from "../model/entity-model.js";
import { resolvePath } from "../resolve/resolve-path.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";

export interface PathLookup {
  /** The path named by `raw` at `where` (a request path such as `orders[0].field`), or null where the policy dropped that use. */
  path(root: EntityModel, raw: string | null | undefined, where: string): ResolvedPath | null;
  /** Whether the use at `where` was dropped (a Summary order names a group key or an alias, not a path). */
  dropped(where: string): boolean;
  /** How the caller spells a resolved path: what errors quote and what a Summary order names a group key by. */
  spelling(path: ResolvedPath, where: string): string;
}

/** Property names as declared: the unguarded request, and every forced condition. */
export const declaredPaths: PathLookup = {
  path: resolvePath,
  dropped: () => false,
  spelling: (path) => path.path,
};
