// A GET route's query string as a Filter for one entity (grammar: client/query-string.ts). The
// URL carries no DataType: each where field gets its own, from the entity's TypeORM metadata, by
// public name (a guarded route's spelling), else by property name (an unguarded one). A path that
// resolves neither way gets Text, and the shape parser and the plan then refuse it exactly as
// they refuse the same JSON body: the query string answers nothing a body would not.
import { filterJsonFromQueryString, type FilterQueryStringOptions } from "../client/query-string.js";
import { modelOfClass } from "../model/entity-model.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import { type ParseLimits, parseFilter } from "../parse/parse-shapes.js";
import { capDefaults } from "../limits/caps.js";
import { reference } from "../decisions/references.js";
import { resolvePath } from "../resolve/resolve-path.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import { DataType } from "../shapes/enums.js";
import type { Filter } from "../shapes/shapes.js";

function resolvedOrNull(resolve: () => ResolvedPath): ResolvedPath | null {
  try {
    return resolve();
  } catch {
    return null;
  }
}

/** The DataType a condition on `field` takes on `entity`: the field's own, else Text. */
export function fieldDataType(entity: Function, field: string): DataType {
  const model = modelOfClass(entity);
  const path = resolvedOrNull(() => reference(model, field, "field").path) ?? resolvedOrNull(() => resolvePath(model, field, "field"));
  const end = path?.end;
  return (end?.kind === "column" ? dataTypeOfKind[end.column.fieldKind] : null) ?? DataType.Text;
}

/** Parses `?where[name][IContains]=ann&order=name:asc&page=2&pageSize=50` as a Filter on `entity`. */
export function parseFilterQueryString(
  entity: Function, search: string | URLSearchParams, options: FilterQueryStringOptions & { readonly limits?: ParseLimits } = {},
): Filter {
  const json = filterJsonFromQueryString(search, (field) => fieldDataType(entity, field), options);
  return parseFilter(json, options.limits ?? capDefaults);
}
