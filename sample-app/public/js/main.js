// The filter page: pick a caller and an entity, build a Filter, Summary or Segment on the
// schema the server gives that caller, see the JSON live, run it, and read the results and the
// policy trace. One state object; the editor is rebuilt from it after each structural change.
import { filterToQueryString } from "/querylib/client/index.js";
import { api, ApiError } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { fieldsPanel } from "./fields-panel.js";
import { buildRequest, emptyQueries, partOf, referencedFields } from "./model.js";
import { modeEditor } from "./modes.js";
import { resultsView } from "./results.js";
import { Schema } from "./schema.js";
import { traceView } from "./trace.js";
import { healthView } from "./health.js";
import { metricsPanel } from "./metrics-panel.js";

const $ = (id) => document.getElementById(id);
const page = document.body.dataset;
const metrics = metricsPanel($("metrics"));

const state = {
  users: [], token: "", entity: "", mode: "filter",
  schema: null, queries: emptyQueries(),
  /** part id → the error the last run blamed on it */
  errors: new Map(),
  /** { result, mode, requested } of the last successful run, or null */
  output: null,
  error: null,
  loadingNode: null,
  /** The linter's findings when this caller may read the admin API, else null (no panel). */
  health: null,
  schemaSeq: 0, runSeq: 0, healthSeq: 0,
};

const query = () => state.queries[state.mode];
const user = () => state.users.find((u) => u.token === state.token);

function status(text) {
  $("status").textContent = text;
}

// ---- rendering ------------------------------------------------------------------------------

function renderFields() {
  replaceChildren($("fields"), state.schema ? fieldsPanel(state.schema, { onOpen: openNode, loading: state.loadingNode }) : h("p", { class: "hint" }, "Loading the schema…"));
}

function renderEditor(focusKey) {
  if (!state.schema) return replaceChildren($("editor"), h("p", { class: "hint" }, "Loading the schema…"));
  const ctx = { schema: state.schema, errors: state.errors, changed };
  replaceChildren($("editor"), modeEditor(state.mode, query(), ctx), focusKey);
}

/** A Filter that has a query string, as the GET link that asks the same (querylib/client's filterToQueryString). */
function linkOf(mode, entity, body) {
  if (mode !== "filter" || !entity) return "";
  try {
    const search = filterToQueryString(body);
    const href = `/api/${encodeURIComponent(entity)}/filter${search ? `?${search}` : ""}`;
    return h("span", {}, "As a link (GET, same answer): ", h("code", {}, href));
  } catch {
    return "This Filter needs a JSON body (Or groups or sub-groups have no query string).";
  }
}

function renderPreview() {
  const { body } = buildRequest(state.mode, query());
  $("json").textContent = JSON.stringify(body, null, 2);
  $("json-title").textContent = `${state.mode[0].toUpperCase()}${state.mode.slice(1)} JSON`;
  replaceChildren($("link"), linkOf(state.mode, state.entity, body));
  const maxCost = state.schema?.maxCost;
  const cost = state.schema ? referencedFields(state.mode, query()).reduce((sum, path) => sum + state.schema.costOf(path), 0) : 0;
  const meter = $("cost-meter");
  meter.max = maxCost ?? 100;
  meter.value = Math.min(cost, meter.max);
  meter.high = meter.max * 0.75;
  meter.optimum = 0;
  const over = maxCost !== null && maxCost !== undefined && cost > maxCost;
  $("cost-text").textContent = maxCost ? `cost ≈ ${cost} of ${maxCost}${over ? ": over budget, the server will refuse it" : ""}` : `cost ≈ ${cost}`;
  $("cost").classList.toggle("over", over);
}

function renderOutput() {
  const banner = $("banner");
  if (state.error) {
    const e = state.error;
    const located = state.errors.size > 0;
    replaceChildren(banner, h("div", { class: "error-banner", role: "alert" },
      h("strong", { class: "error-code" }, e.errorCode ? `${e.code} (${e.errorCode})` : e.code), " ", h("span", { class: "error-message" }, e.message),
      located ? h("p", { class: "hint" }, "Shown next to the part of the query it is about.") : null), null);
  } else banner.replaceChildren();
  const out = state.output;
  replaceChildren($("results"), out ? resultsView(out.result, { requested: out.requested, schema: state.schema, mode: out.mode, onPage: goToPage }) : null);
  replaceChildren($("trace"), out ? traceView(out.result.policy, state.schema) : null);
}

function renderHealth() {
  replaceChildren($("health"), healthView(state.health));
}

/** Policy health for this caller: shown to admins, absent otherwise. */
async function loadHealth() {
  const seq = ++state.healthSeq;
  let findings = null;
  try {
    ({ findings } = await api.policyHealth(state.token));
  } catch {
    findings = null;
  }
  if (seq !== state.healthSeq) return;
  state.health = findings;
  page.health = findings ? "shown" : "none";
  renderHealth();
  void metrics.refresh(state.token, findings !== null);
}

function renderModes() {
  for (const button of document.querySelectorAll("[data-mode]")) button.setAttribute("aria-pressed", String(button.dataset.mode === state.mode));
}

function renderWho() {
  const u = user();
  $("whoami").textContent = u ? `${u.name} · roles ${u.roles.join(", ")} · tenant ${u.tenant} · ${u.about}` : "";
}

function renderAll() {
  renderModes();
  renderWho();
  renderFields();
  renderEditor();
  renderPreview();
  renderOutput();
}

/** Editor callback: "structure" rebuilds the editor (focus goes to `focusKey` or stays), "value" only refreshes JSON and cost. */
function changed(kind, focusKey) {
  // A cursor belongs to the request it came with: any edit starts the walk again from the first page.
  const paged = query().page;
  paged.after = "";
  paged.before = null;
  if (state.errors.size) {
    state.errors.clear();
    if (kind !== "structure") for (const note of $("editor").querySelectorAll(".error-note")) note.remove();
  }
  if (kind === "structure") renderEditor(focusKey);
  renderPreview();
}

// ---- schema ---------------------------------------------------------------------------------

async function loadSchema(opened = []) {
  const seq = ++state.schemaSeq;
  page.schema = "loading";
  status(`Loading what ${user()?.name ?? "this caller"} may use on ${state.entity}…`);
  try {
    const schema = await Schema.load(state.token, state.entity, opened);
    if (seq !== state.schemaSeq) return;
    state.schema = schema;
    state.error = null;
    page.schema = "ready";
    status(`${schema.fields.size} fields of ${state.entity} for ${user()?.name}.`);
  } catch (error) {
    if (seq !== state.schemaSeq) return;
    state.schema = null;
    state.error = asApiError(error);
    page.schema = "error";
    status("The schema could not be loaded.");
  }
  page.schemaSeq = String(seq);
  renderAll();
}

async function openNode(node) {
  const schema = state.schema;
  state.loadingNode = node.path;
  renderFields();
  try {
    await schema.open(state.token, node.path);
    status(`Loaded the fields of ${node.path}.`);
  } catch (error) {
    state.error = asApiError(error);
    renderOutput();
  }
  if (schema !== state.schema) return;
  state.loadingNode = null;
  renderFields();
  renderEditor(`node:${node.path}`);
  renderPreview();
  document.querySelector(`[data-node="${CSS.escape(node.path)}"] summary`)?.focus();
}

// ---- running --------------------------------------------------------------------------------

function asApiError(error) {
  return error instanceof ApiError ? error : new ApiError(0, { code: "ClientError", message: String(error?.message ?? error) });
}

async function run() {
  if (!state.schema) return;
  const mode = state.mode;
  const q = query();
  const { body, paths } = buildRequest(mode, q);
  const seq = ++state.runSeq;
  page.run = "running";
  $("run").setAttribute("aria-busy", "true");
  status("Running…");
  state.errors.clear();
  try {
    const result = await api.run(state.token, state.entity, mode, body);
    if (seq !== state.runSeq) return;
    const requested = mode === "summary" ? [...q.groupFields.map((k) => k.path), ...q.aggregates.map((a) => a.alias)] : q.selects.map((s) => s.path);
    state.output = { result, mode, requested };
    state.error = null;
    page.run = "done";
    status(result.totalCount === null ? "Done; the total was not counted." : `${result.count === "estimated" ? "About " : ""}${result.totalCount} ${mode === "summary" ? "groups" : "rows"} in total.`);
  } catch (error) {
    if (seq !== state.runSeq) return;
    state.output = null;
    state.error = asApiError(error);
    const part = partOf(paths, state.error.path);
    if (part) state.errors.set(part, state.error);
    page.run = "error";
    status(`The server refused the query: ${state.error.code}.`);
  }
  $("run").removeAttribute("aria-busy");
  page.runSeq = String(seq);
  renderEditor();
  renderOutput();
  void metrics.refresh(state.token, state.health !== null);
}

/** `to`: a page number, or a cursor page's { after } or { before }. */
function goToPage(to) {
  const page = query().page;
  if (typeof to === "number") page.pageNumber = to;
  else {
    page.after = to.after ?? null;
    page.before = to.before ?? null;
  }
  renderEditor(typeof to === "number" ? "page:pageNumber" : "page:pageSize");
  renderPreview();
  void run();
}

async function copyJson() {
  const text = $("json").textContent;
  try {
    await navigator.clipboard.writeText(text);
    status("The JSON is on the clipboard.");
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("json"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    status("The JSON is selected: press Ctrl+C to copy it.");
  }
}

// ---- start ----------------------------------------------------------------------------------

async function start() {
  page.schema = "loading";
  let index;
  try {
    index = await api.index();
    // Dev users (and their tokens) exist on a dev-mode host only; the page says so loudly.
    $("dev-host").textContent = index.devHost ?? "";
    $("dev-host").hidden = !index.devHost;
    if (!index.devHost) throw new ApiError(0, { code: "DevModeOff", message: "This host is not in dev mode, so there are no dev users to call as (npm start runs it in dev mode)." });
    state.users = await api.devUsers();
  } catch (error) {
    state.error = asApiError(error);
    page.schema = "error";
    return renderOutput();
  }
  const caller = $("caller");
  caller.replaceChildren(...state.users.map((u) => h("option", { value: u.token }, `${u.name} (${u.roles.join(", ")}, ${u.tenant})`)));
  const entity = $("entity");
  entity.replaceChildren(...index.entities.map((name) => h("option", { value: name }, name)));
  state.token = state.users[0]?.token ?? "";
  state.entity = index.entities.includes("customers") ? "customers" : index.entities[0];
  caller.value = state.token;
  entity.value = state.entity;

  caller.addEventListener("change", () => {
    state.token = caller.value;
    void loadHealth();
    // Same query, new caller: what this caller may not use shows as unavailable.
    void loadSchema(state.schema ? [...state.schema.opened] : []);
  });
  entity.addEventListener("change", () => {
    state.entity = entity.value;
    state.queries = emptyQueries();
    state.output = null;
    state.error = null;
    state.errors.clear();
    void loadSchema([]);
  });
  for (const button of document.querySelectorAll("[data-mode]")) {
    button.addEventListener("click", () => {
      state.mode = button.dataset.mode;
      renderModes();
      renderEditor();
      renderPreview();
    });
  }
  $("run").addEventListener("click", () => void run());
  $("copy").addEventListener("click", () => void copyJson());
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void run();
    }
  });
  void loadHealth();
  await loadSchema([]);
}

void start();
