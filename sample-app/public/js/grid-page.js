// The grid page: AG Grid Community (its own ESM build, /vendor/, no bundler) over the sample
// app's query API, configured only from what POST /qp-admin/schema tells the chosen caller,
// through querylib/client/ag-grid (/querylib/client/grids/). The rows grid uses the infinite row
// model (Community's server-side model); its filters, sorts and blocks become QueryLib Filters.
// Community has no row grouping, so the groups panel asks the same adapter for one level of
// groups (a Summary: Count and Sum) and shows them in a second grid. <body> announces
// data-schema, data-rows-seq and data-groups-seq; the browser tests wait on these, never on time.
import { AllCommunityModule, ModuleRegistry, createGrid } from "/vendor/ag-grid-community.mjs";
import { GridCore, columnDefsFromSchema, createInfiniteDatasource, httpTransport, serverSideRows } from "/querylib/client/grids/ag-grid.js";
import { api } from "./api.js";

ModuleRegistry.registerModules([AllCommunityModule]);

const $ = (id) => document.getElementById(id);
const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const state = { users: [], token: null, entity: "customers", core: null, rows: null, groups: null };
/** Text icons: the themes' icon font is a data: URL, which the page's Content-Security-Policy does not load. */
const icons = { filter: "▿", filterActive: "▾", menu: "☰", menuAlt: "☰", sortAscending: "↑", sortDescending: "↓", sortUnSort: "↕", smallDown: "▾", smallLeft: "‹", smallRight: "›" };
/** For the browser tests and for a look from the console: the two grids' APIs and the core. */
window.querylibGridPage = { rows: () => state.rows, groups: () => state.groups, core: () => state.core };

function bump(name) {
  document.body.dataset[name] = String(Number(document.body.dataset[name] ?? "0") + 1);
}

function showError(element, error) {
  if (!error) {
    element.hidden = true;
    element.textContent = "";
    return;
  }
  const where = error.column ? `${error.column}: ` : "";
  element.textContent = `${where}${error.message}`;
  element.dataset.code = error.code ?? "";
  element.dataset.column = error.column ?? "";
  element.hidden = false;
}

const transportOf = (token, entity) => httpTransport(`/api/${encodeURIComponent(entity)}`, { headers: { authorization: `Bearer ${token}` } });

/** The schema of the entity's own fields, and on orders its customer's (no collection: a grid row is one record). */
async function loadSchema(token, entity) {
  return api.schema(token, entity, entity === "orders" ? ["", "customer"] : [""], 1);
}

function rowsGrid(core, transport) {
  const inner = createInfiniteDatasource(core, transport, { timeZone, onError: (error) => showError($("grid-error"), error) });
  const datasource = {
    getRows(params) {
      inner.getRows({
        ...params,
        successCallback(rows, last) {
          showError($("grid-error"), null);
          $("row-count").textContent = `${last} rows`;
          params.successCallback(rows, last);
          bump("rowsSeq");
        },
        failCallback() {
          params.failCallback();
          bump("rowsSeq");
        },
      });
    },
  };
  return createGrid($("rows"), {
    theme: "legacy",
    icons,
    rowModelType: "infinite",
    cacheBlockSize: 50,
    maxBlocksInCache: 20,
    columnDefs: columnDefsFromSchema(core, { community: true }),
    defaultColDef: { floatingFilter: true, minWidth: 130, flex: 1, filterParams: { debounceMs: 200 } },
    tooltipShowDelay: 0,
    datasource,
  });
}

function groupsGrid() {
  return createGrid($("groups"), {
    theme: "legacy",
    icons,
    columnDefs: [],
    rowData: [],
    defaultColDef: { flex: 1, minWidth: 130 },
    onRowDoubleClicked: (event) => showGroup(event.data),
  });
}

function fillGroupPickers(core) {
  const groupBy = $("group-by");
  const sumOf = $("sum-of");
  groupBy.replaceChildren(...core.columns.filter((c) => c.groupable && c.operators.has("Equal")).map((c) => new Option(c.label, c.id)));
  sumOf.replaceChildren(new Option("(none)", ""), ...core.columns.filter((c) => c.aggregators.includes("Sumation")).map((c) => new Option(c.label, c.id)));
  const preferred = ["customer.segment", "segment"].find((id) => core.has(id) && core.column(id).groupable);
  if (preferred) groupBy.value = preferred;
  if (core.has("total") && core.column("total").aggregators.includes("Sumation")) sumOf.value = "total";
}

async function runGroups() {
  const { core } = state;
  const key = $("group-by").value;
  const sum = $("sum-of").value;
  if (!key) return;
  const valueCols = [{ id: "count", displayName: "Count", field: "count", aggFunc: "count" }, ...(sum ? [{ id: sum, displayName: core.column(sum).label, field: sum, aggFunc: "sum" }] : [])];
  const request = { startRow: 0, endRow: 100, rowGroupCols: [{ id: key, displayName: core.column(key).label, field: key }], valueCols, pivotCols: [], pivotMode: false, groupKeys: [], filterModel: state.rows.getFilterModel(), sortModel: [] };
  try {
    const answer = await serverSideRows(core, transportOf(state.token, state.entity), request, { maxPageSize: 200 });
    showError($("group-error"), null);
    state.groups.setGridOption("columnDefs", [
      { colId: key, field: key, headerName: core.column(key).label },
      { colId: "count", field: "count", headerName: "Count" },
      ...(sum ? [{ colId: sum, field: sum, headerName: `Sum of ${core.column(sum).label}`, valueFormatter: (p) => (typeof p.value === "number" ? p.value.toFixed(2) : p.value ?? "") }] : []),
    ]);
    state.groups.setGridOption("rowData", answer.rowData);
  } catch (error) {
    showError($("group-error"), error);
    state.groups.setGridOption("rowData", []);
  }
  bump("groupsSeq");
}

/** A double-clicked group: the rows grid filtered to its key (the same Equal a drill-down sends). */
function showGroup(row) {
  const key = $("group-by").value;
  const value = key.split(".").reduce((at, part) => (at == null ? null : at[part]), row);
  const column = state.core.column(key);
  const model = column.dataType === "Number" ? { filterType: "number", type: "equals", filter: value } : { filterType: "text", type: "equals", filter: String(value) };
  state.rows.setFilterModel({ ...state.rows.getFilterModel(), [key]: model });
}

async function load() {
  document.body.dataset.schema = "loading";
  const user = state.users.find((u) => u.token === state.token);
  $("whoami").textContent = user ? `${user.name}: ${user.about}` : "";
  state.rows?.destroy();
  state.rows = null;
  showError($("grid-error"), null);
  showError($("group-error"), null);
  try {
    const schema = await loadSchema(state.token, state.entity);
    state.core = new GridCore(schema, { timeZone });
    state.rows = rowsGrid(state.core, transportOf(state.token, state.entity));
    fillGroupPickers(state.core);
    state.groups.setGridOption("rowData", []);
    const hidden = state.core.columns.filter((c) => !c.selectable).length;
    $("status").textContent = `${state.core.columns.length} columns for this caller${hidden ? `, ${hidden} hidden` : ""}; dates in ${timeZone}`;
    document.body.dataset.schema = "ready";
  } catch (error) {
    $("status").textContent = `The schema could not be read: ${error.message}`;
    document.body.dataset.schema = "error";
  }
  bump("schemaSeq");
}

async function main() {
  const params = new URLSearchParams(location.search);
  state.users = await api.devUsers();
  $("caller").replaceChildren(...state.users.map((u) => new Option(`${u.name} (${u.tenant})`, u.token)));
  state.token = params.get("caller") && state.users.some((u) => u.token === params.get("caller")) ? params.get("caller") : state.users[0]?.token;
  $("caller").value = state.token;
  state.entity = params.get("entity") === "orders" ? "orders" : "customers";
  $("entity").value = state.entity;
  state.groups = groupsGrid();
  $("caller").addEventListener("change", () => {
    state.token = $("caller").value;
    void load();
  });
  $("entity").addEventListener("change", () => {
    state.entity = $("entity").value;
    void load();
  });
  $("group").addEventListener("click", () => void runGroups());
  await load();
}

void main();
