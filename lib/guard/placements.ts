// What the policy resolved and decided at each place of a caller's request: the path a field
// reference names (found by public names) and how the caller spells it, or that the use was
// dropped. The plan is built from the caller's parsed request through these (a PathLookup), so
// a path is walked once, by the policy, and a dropped use never enters the plan. The projection
// is the policy's alone (transformPlan sets it): select places are never looked up here.
import type { EntityModel } from "../model/entity-model.js";
import type { PathLookup } from "../plan/path-lookup.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import type { Reference } from "../decisions/references.js";

const isSelect = (where: string) => where.startsWith("selects[");

export class Placements implements PathLookup {
  /** By request path (`conditionGroup.conditions[0].field`, `orders[1].field`, …); null: dropped. */
  private readonly places = new Map<string, Reference | null>();

  place(where: string, ref: Reference): void {
    this.places.set(where, ref);
  }

  drop(where: string): void {
    this.places.set(where, null);
  }

  path(_root: EntityModel, _raw: string | null | undefined, where: string): ResolvedPath | null {
    const placed = this.places.get(where);
    if (placed !== undefined) return placed?.path ?? null;
    if (isSelect(where)) return null;
    // Every field reference of a request is placed before it is planned: a miss is a bug here.
    throw new Error(`internal: no policy decision for the field at ${where}`);
  }

  dropped(where: string): boolean {
    return this.places.get(where) === null;
  }

  spelling(path: ResolvedPath, where: string): string {
    return this.places.get(where)?.publicPath ?? path.path;
  }

  /** The real (canonical) path placed at `where`, or null when dropped or never placed (Simulate shows the request with real names). */
  canonical(where: string): string | null {
    return this.places.get(where)?.canonical ?? null;
  }
}
