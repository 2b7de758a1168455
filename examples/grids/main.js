// A small React app over the sample app's API: MUI X DataGrid (Community) with QueryLib's data
// source and the caller's columns, and a Refine useList view through QueryLib's data provider.
// The caller is a dev token (?token=dev-ben, dev-cleo by default; the sample app in dev mode).
// Plain createElement, so Vite needs no JSX plugin.
import { StrictMode, createElement as h, useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import * as mui from "@mui/x-data-grid";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Refine, useList } from "@refinedev/core";
import { columnsFromSchema, createDataSource, muiHttpTransport, visibilityFromSchema } from "querylib/client/mui";
import { dataProvider } from "querylib/client/refine";

const token = new URLSearchParams(location.search).get("token") ?? "dev-cleo";
const headers = { authorization: `Bearer ${token}` };
// MUI reads a date-time filter in the browser's zone: QueryLib is told the same one.
const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

async function loadSchema() {
  const reply = await fetch("/qp-admin/schema", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ entity: "customers", depth: 1 }) });
  if (!reply.ok) throw new Error(`schema: HTTP ${reply.status}`);
  return reply.json();
}

function CustomersGrid({ schema }) {
  const apiRef = mui.useGridApiRef();
  const [error, setError] = useState(null);
  const columns = useMemo(() => columnsFromSchema(schema, { operators: mui, timeZone }), [schema]);
  const dataSource = useMemo(() => createDataSource(schema, muiHttpTransport("/api/customers", { headers }), { timeZone }), [schema]);
  useEffect(() => {
    window.querylibGrid = apiRef; // for the browser test: setFilterModel, getAllColumns
  }, [apiRef]);
  return h("section", { id: "mui" },
    h("h2", null, `MUI X DataGrid (${token})`),
    error ? h("p", { id: "mui-error", role: "alert" }, error) : null,
    h("div", { style: { height: 560, width: "100%" } },
      h(mui.DataGrid, {
        apiRef, columns, dataSource,
        pagination: true, pageSizeOptions: [10, 25, 50],
        initialState: { pagination: { paginationModel: { page: 0, pageSize: 10 } }, columns: { columnVisibilityModel: visibilityFromSchema(schema) } },
        onDataSourceError: (e) => setError(e.message),
        disableRowSelectionOnClick: true,
      })));
}

function RefineList() {
  const { result, query } = useList({
    resource: "customers",
    filters: [{ field: "segment", operator: "eq", value: "Retail" }],
    sorters: [{ field: "id", order: "asc" }],
    pagination: { currentPage: 1, pageSize: 5 },
    meta: { fields: ["id", "name", "segment"] },
  });
  if (query.isError) return h("p", { id: "refine-error", role: "alert" }, String(query.error?.message));
  if (query.isLoading) return h("p", null, "loading…");
  return h("section", { id: "refine" },
    h("h2", null, `Refine useList: Retail customers (${result.total})`),
    h("table", null,
      h("thead", null, h("tr", null, h("th", null, "id"), h("th", null, "name"), h("th", null, "segment"))),
      h("tbody", null, result.data.map((row) => h("tr", { key: row.id, "data-id": row.id }, h("td", null, row.id), h("td", null, row.name), h("td", null, row.segment))))));
}

function App() {
  const [schema, setSchema] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => void loadSchema().then(setSchema, (e) => setError(e.message)), []);
  const provider = useMemo(() => dataProvider("/api", { timeZone, headers, schemaUrl: "/qp-admin/schema" }), []);
  if (error) return h("p", { role: "alert" }, error);
  if (!schema) return h("p", null, "loading the caller's schema…");
  return h("main", null,
    h("h1", null, "QueryLib: the grids users already have"),
    h(CustomersGrid, { schema }),
    h(Refine, { dataProvider: provider, resources: [{ name: "customers" }], options: { disableTelemetry: true } }, h(RefineList)));
}

const queryClient = new QueryClient();
createRoot(document.getElementById("root")).render(h(StrictMode, null, h(QueryClientProvider, { client: queryClient }, h(App))));
