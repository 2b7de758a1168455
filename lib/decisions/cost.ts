// A query's cost (QpCost; caps.maxQueryCost): each use of a field costs its own weight and that of
// every navigation crossed on the way to it. The sanitizer sums it per request, the schema endpoint
// shows it per field; both read it here.
import type { QpCaps } from "../limits/caps.js";
import type { PolicyMember, Reference } from "./references.js";

/** A member's weight: its QpCost, or the default field cost. */
export function memberCost(member: PolicyMember, caps: Pick<QpCaps, "defaultFieldCost">): number {
  const cost = member.policy?.attributes.find((a) => a.kind === "cost");
  return cost && cost.kind === "cost" ? cost.weight : caps.defaultFieldCost;
}

/** One use of a referenced field: its weight plus every member crossed on the way. */
export function referenceCost(ref: Pick<Reference, "crossed" | "end">, caps: Pick<QpCaps, "defaultFieldCost">): number {
  return ref.crossed.reduce((sum, member) => sum + memberCost(member, caps), memberCost(ref.end, caps));
}
