// The projection under a guard: each select decided for Select (dropped or refused when denied; a
// whole relation or embedded object column by column), or, without selects, the default
// projection of every root column the caller may select (worked out once per decision table and
// root, then replayed). Each kept column is renamed to public names and gets its output chain; the
// keys a typed result adds below the root are granted only where the caller may select them as
// stored (grantKeys). All selects dropped is AllSelectsDenied.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { PolicyAction, PolicyEffect, PolicyFeature } from "../shapes/policy-enums.js";
import { type EntityModel, type MemberScope, columnPathsOf } from "../model/entity-model.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { type PolicyMember, policyMember, reference } from "../decisions/references.js";
import type { PolicyDiagnostic } from "./diagnostics.js";
import { type RenameTree, addRename } from "./renames.js";
import type { TransformTree } from "../transform/apply.js";
import type { Hop } from "../resolve/resolved-path.js";
import { keyPathOf } from "../plan/projection.js";
import { type Sanitizer, outputChainOf } from "./sanitizer.js";

/**
 * The columns the caller may read: a select list, or null for every column of the root, which
 * is what the default projection comes to when the policy leaves out none of them (the planner
 * then reads the whole root as an unguarded request does, without resolving each path again).
 */
export function sanitizeSelects(s: Sanitizer, selects: readonly string[] | null | undefined): string[] | null {
  const kept: string[] = [];
  if (!selects) {
    if (defaultProjection(s, kept)) return null;
  }
  else {
    selects.forEach((raw, i) => {
      const where = `selects[${i}]`;
      const ref = reference(s.root, raw, where);
      if (!s.allow(ref, PolicyFeature.Select, where, true)) return;
      s.checkReference(ref, where);
      const end = ref.end.member;
      if (end.kind === "column") {
        kept.push(ref.canonical);
        addRename(s.renames, [...ref.crossed, ref.end]);
        s.noteTransform(ref.canonical.split("."), ref.end);
        grantKeys(s, ref.path.hops, [...ref.crossed, ref.end]);
        return;
      }
      // A whole relation or embedded object: each of its columns on its own.
      const scope = end.kind === "embedded" ? end.scope : end.target().scope;
      const owner = end.kind === "embedded" ? end.target : end.target().target;
      const whole = ref.path.end;
      grantKeys(s, whole.kind === "relation" ? [...ref.path.hops, whole.hop] : ref.path.hops, [...ref.crossed, ref.end]);
      for (const column of columnsOf(scope, owner)) selectColumn(s, `${ref.canonical}.${column.path}`, [...ref.crossed, ref.end, ...column.members], kept, where);
    });
  }
  if (kept.length === 0 && (!s.dryRun || s.enforcedDrops > 0)) {
    policyError(PolicyErrorCode.AllSelectsDenied, "every requested select was dropped by the policy; the query does not fall back to other fields", "selects");
  }
  return kept;
}

/**
 * 2.1.5 §4.1: a typed result returns each object a select builds below the root with its key
 * (plan/projection.ts). Each such key is decided as a select of its own and added only where
 * the caller may select it as stored: allowed, with no transform (a masked or hashed key
 * would identify nothing; a denied one must not leak through the addition, dry run included).
 * It is not traced: the caller did not ask for it, and a dynamic row never carries it.
 * `members`: the policy members along `hops` (embeddeds included), ending on or past the last hop.
 */
function grantKeys(s: Sanitizer, hops: readonly Hop[], members: readonly PolicyMember[]): void {
  const relations = members.flatMap((m, i) => (m.member.kind === "reference" || m.member.kind === "collection" ? [i] : []));
  if (relations.length < hops.length) return; // not aligned: add nothing
  let prefix = "";
  hops.forEach((hop, i) => {
    prefix += `${hop.member.name}.`;
    for (const key of hop.to.primaryKeys) {
      const path = keyPathOf(prefix, key);
      if (s.decidedKeys.has(path)) continue;
      s.decidedKeys.add(path);
      const column = columnsOf(hop.to.scope, hop.to.target).find((c) => c.path === key.propertyPath);
      const member = column?.members[column.members.length - 1];
      if (!column || !member) continue;
      const decision = s.selectDecision(member);
      if (decision.effect !== PolicyEffect.Allow || outputChainOf(member, decision) !== null) continue;
      s.selectKeys.add(path);
      addRename(s.renames, [...members.slice(0, relations[i]! + 1), ...column.members]);
    }
  });
}

/** What the default projection did for a decision table and root (defaultProjection). */
interface DefaultProjection {
  readonly columns: readonly string[];
  readonly diagnostics: readonly PolicyDiagnostic[];
  readonly renames: RenameTree;
  readonly transforms: TransformTree;
}
const defaultProjections = new WeakMap<DecisionTable, WeakMap<EntityModel, DefaultProjection>>();

/**
 * Every root column the caller may select; the rest is left out. It depends only on the
 * decision table and the root, so it is worked out once per pair and replayed: the same
 * columns, diagnostics (so trace entries and audit events), renames and transforms. It runs
 * before anything else renames or transforms (checked), so those trees are its alone. True
 * when it kept every column of the root.
 */
function defaultProjection(s: Sanitizer, kept: string[]): boolean {
  const columnsOfRoot = columnsOf(s.root.scope, s.root.target);
  if (s.renames.size > 0 || s.transforms.size > 0) {
    for (const column of columnsOfRoot) selectColumn(s, column.path, column.members, kept, "selects");
    return kept.length === columnsOfRoot.length;
  }
  let byRoot = defaultProjections.get(s.decisions);
  if (!byRoot) defaultProjections.set(s.decisions, (byRoot = new WeakMap()));
  let known = byRoot.get(s.root);
  if (!known) {
    const decided = s.diagnostics.length;
    const columns: string[] = [];
    for (const column of columnsOfRoot) selectColumn(s, column.path, column.members, columns, "selects");
    known = { columns, diagnostics: s.diagnostics.slice(decided), renames: s.renames, transforms: s.transforms };
    byRoot.set(s.root, known);
  } else {
    s.diagnostics.push(...known.diagnostics);
    [s.renames, s.transforms] = [known.renames, known.transforms];
  }
  kept.push(...known.columns);
  return kept.length === columnsOfRoot.length;
}

function selectColumn(s: Sanitizer, path: string, members: readonly PolicyMember[], kept: string[], where: string): void {
  const publicPath = members.map((m) => m.publicName).join(".");
  const end = members[members.length - 1]!;
  const decision = s.selectDecision(end);
  if (decision.effect === PolicyEffect.Deny) {
    s.record(publicPath, "Select", PolicyAction.Dropped, decision, !s.dryRun, `not selectable (${where} asked for the whole object)`, end);
    if (!s.dryRun) return;
  } else s.recordSelect(publicPath, end, decision);
  kept.push(path);
  addRename(s.renames, members);
  s.noteTransform(path.split("."), end);
}


/** Columns under a scope with the policy members on the way (embeddeds included). */
type ScopeColumn = { readonly path: string; readonly members: readonly PolicyMember[] };
const scopeColumns = new WeakMap<MemberScope, WeakMap<Function, readonly ScopeColumn[]>>();

/** Every column of a scope (embedded members flattened), once per scope and owner: the model is fixed. */
export function columnsOf(scope: MemberScope, owner: Function): readonly ScopeColumn[] {
  let byOwner = scopeColumns.get(scope);
  if (!byOwner) scopeColumns.set(scope, (byOwner = new WeakMap()));
  let columns = byOwner.get(owner);
  if (!columns) byOwner.set(owner, (columns = scopeColumnList(scope, owner)));
  return columns;
}

/** The columns of columnPathsOf with each step as a policy member (the embeddeds' owners on the way). */
function scopeColumnList(scope: MemberScope, owner: Function): ScopeColumn[] {
  return columnPathsOf(scope).map(({ path, steps }) => {
    let stepOwner = owner;
    const members = steps.map((step) => {
      const member = policyMember(stepOwner, step.scope, step.member);
      if (step.member.kind === "embedded") stepOwner = step.member.target;
      return member;
    });
    return { path, members };
  });
}
