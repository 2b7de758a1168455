// Members with a public alias come back under that name, wherever they appear in a result.
import type { PolicyMember } from "../decisions/references.js";

export type RenameTree = Map<string, { publicName: string; children: RenameTree }>;

export function addRename(tree: RenameTree, members: readonly PolicyMember[]): void {
  let at = tree;
  for (const m of members) {
    let node = at.get(m.member.name);
    if (!node) at.set(m.member.name, (node = { publicName: m.publicName, children: new Map() }));
    at = node.children;
  }
}

const renamesAnything = new WeakMap<RenameTree, boolean>();

/** Whether any member of the tree, at any depth, has a public name other than its own (memoised: trees are cached with plans). */
function hasRename(tree: RenameTree): boolean {
  let known = renamesAnything.get(tree);
  if (known === undefined) {
    known = [...tree].some(([real, node]) => node.publicName !== real || hasRename(node.children));
    renamesAnything.set(tree, known);
  }
  return known;
}

/** Renames in place (results are QueryLib's own detached objects). */
export function applyRenames(value: unknown, tree: RenameTree): void {
  if (!hasRename(tree) || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) applyRenames(item, tree);
    return;
  }
  const object = value as Record<string, unknown>;
  let renamed = false;
  for (const [real, node] of tree) {
    if (!(real in object)) continue;
    applyRenames(object[real], node.children);
    renamed ||= node.publicName !== real;
  }
  if (!renamed) return;
  // Re-insert every member so a renamed one keeps its place.
  const entries = Object.entries(object);
  for (const [key] of entries) delete object[key];
  for (const [key, inner] of entries) object[tree.get(key)?.publicName ?? key] = inner;
}

/** Summary rows: group keys named from real paths → named from public paths, in place and order. */
export function renameKeys(rows: Record<string, unknown>[], renames: ReadonlyMap<string, string>): void {
  if (![...renames].some(([real, publicName]) => real !== publicName)) return;
  for (const row of rows) {
    const entries = Object.entries(row);
    for (const [key] of entries) delete row[key];
    for (const [key, inner] of entries) row[renames.get(key) ?? key] = inner;
  }
}
