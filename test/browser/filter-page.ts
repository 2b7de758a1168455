// The filter page as a test drives it: by the controls a person uses (selects, buttons, inputs
// found by their labels and places), waiting on the states the page announces on <body>
// (data-schema / data-schema-seq after a schema load, data-run / data-run-seq after a run),
// never on time.
import type { Locator, Page } from "playwright-core";

export interface ConditionInput {
  readonly field: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

export interface Table {
  readonly columns: string[];
  readonly rows: string[][];
  /** The marker on each column's header ("masked", "hashed", …), or null. */
  readonly markers: (string | null)[];
}

export class FilterPage {
  constructor(readonly page: Page, readonly base: string) {}

  private counter(name: "schemaSeq" | "runSeq"): Promise<number> {
    return this.page.evaluate((key) => Number(document.body.dataset[key] ?? "0"), name);
  }

  private async afterSchemaLoad(action: () => Promise<unknown>): Promise<void> {
    const before = await this.counter("schemaSeq");
    await action();
    await this.page.waitForFunction((seq) => Number(document.body.dataset.schemaSeq ?? "0") > seq && document.body.dataset.schema !== "loading", before);
    const state = await this.page.evaluate(() => document.body.dataset.schema);
    if (state !== "ready") throw new Error(`the schema did not load: ${await this.page.locator("#banner").innerText()}`);
  }

  async open(): Promise<void> {
    await this.afterSchemaLoad(() => this.page.goto(`${this.base}/`));
  }

  asCaller(token: string): Promise<void> {
    return this.afterSchemaLoad(() => this.page.selectOption("#caller", token));
  }

  onEntity(name: string): Promise<void> {
    return this.afterSchemaLoad(() => this.page.selectOption("#entity", name));
  }

  async mode(name: "filter" | "summary" | "segment"): Promise<void> {
    await this.page.click(`[data-mode="${name}"]`);
  }

  /** Opens a navigation in the fields panel (a subtree request) and waits for its fields. */
  async openNavigation(path: string): Promise<void> {
    await this.page.click(`[data-node="${path}"] button.open-node`);
    await this.page.locator(`[data-node="${path}"] details`).waitFor();
  }

  /** The first top-level condition group of the editor (a Filter's or Summary's "Rows where", a Segment's first set). */
  rootGroup(): Locator {
    return this.page.locator("#editor fieldset.group").first();
  }

  subGroup(group: Locator, index: number): Locator {
    return group.locator(":scope > fieldset.group").nth(index);
  }

  condition(group: Locator, index: number): Locator {
    return group.locator(":scope > ul.conditions > li.condition").nth(index);
  }

  async addCondition(group: Locator, input: ConditionInput): Promise<Locator> {
    await group.locator(":scope > .group-actions").getByRole("button", { name: "+ Condition" }).click();
    const condition = group.locator(":scope > ul.conditions > li.condition").last();
    await this.setCondition(condition, input);
    return condition;
  }

  /** Adds a sub-group (it starts with one condition, set to `first`). */
  async addGroup(group: Locator, first: ConditionInput): Promise<Locator> {
    await group.locator(":scope > .group-actions").getByRole("button", { name: "+ Group" }).click();
    const sub = group.locator(":scope > fieldset.group").last();
    await this.setCondition(this.condition(sub, 0), first);
    return sub;
  }

  async setCondition(condition: Locator, { field, operator, values = [] }: ConditionInput): Promise<void> {
    await condition.locator("select.field-select").selectOption(field);
    await condition.locator("select.operator").selectOption(operator);
    const controls = condition.locator(".condition-controls");
    const many = controls.locator("select[multiple]");
    if (await many.count()) return void (await many.selectOption([...values]));
    const list = controls.locator("input[aria-label^='Values']");
    if (await list.count()) return list.fill(values.join(", "));
    const inputs = controls.locator("input, select:not(.field-select):not(.operator)");
    for (let i = 0; i < values.length; i++) {
      const input = inputs.nth(i);
      if ((await input.evaluate((e) => e.tagName)) === "SELECT") await input.selectOption(values[i]!);
      else await input.fill(values[i]!);
    }
  }

  async setConnector(group: Locator, connector: "And" | "Or"): Promise<void> {
    await group.locator(":scope > legend select.connector").selectOption(connector);
  }

  /** Adds a column (Filter, Segment) or a group key (Summary) by its picker. */
  async pick(label: "add column" | "group by" | "sort by", path: string): Promise<void> {
    await this.page.locator("#editor").getByLabel(label, { exact: true }).selectOption(path);
  }

  async sortBy(path: string, direction: "Ascending" | "Descending" = "Ascending"): Promise<void> {
    await this.pick("sort by", path);
    await this.page.locator("#editor ol.orders > li").last().getByLabel(/direction/).selectOption(direction);
  }

  async pageSize(size: number): Promise<void> {
    await this.page.locator("#editor").getByLabel("Rows per page").fill(String(size));
  }

  /** Runs the query and waits for the page to show the answer: "done" or "error". */
  async run(): Promise<string> {
    const before = await this.counter("runSeq");
    await this.page.click("#run");
    await this.page.waitForFunction((seq) => Number(document.body.dataset.runSeq ?? "0") > seq, before);
    return this.page.evaluate(() => document.body.dataset.run ?? "");
  }

  /** The request body the page shows (and sends). */
  async json(): Promise<any> {
    return JSON.parse(await this.page.locator("#json").innerText());
  }

  async total(): Promise<number> {
    return Number(await this.page.locator(".results .totals").getAttribute("data-total"));
  }

  async table(): Promise<Table> {
    return this.page.locator(".results").evaluate((section) => {
      const columns = [...section.querySelectorAll("thead th")].map((th) => th.getAttribute("data-column") ?? "");
      const rows = [...section.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""));
      const markers = [...section.querySelectorAll("thead th")].map((th) => th.querySelector(".marker")?.textContent ?? null);
      return { columns, rows, markers };
    });
  }

  /** The paths the fields panel lists. */
  fieldPaths(): Promise<string[]> {
    return this.page.locator("#fields li.field").evaluateAll((items) => items.map((i) => i.getAttribute("data-path") ?? ""));
  }

  /** The values a field picker offers (its enabled options). */
  pickerOptions(picker: Locator): Promise<string[]> {
    return picker.locator("option:not([disabled])").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
  }
}

/**
 * The tour's filter on customers, built by clicking: segment is SmallBusiness or Enterprise,
 * AND (country is DE OR balance > 20000). Opens the Contact navigation for the country.
 */
export async function buildTwoGroupFilter(ui: FilterPage): Promise<void> {
  await ui.openNavigation("contact");
  const root = ui.rootGroup();
  await ui.addCondition(root, { field: "segment", operator: "In", values: ["SmallBusiness", "Enterprise"] });
  const either = await ui.addGroup(root, { field: "contact.country", operator: "Equal", values: ["DE"] });
  await ui.setConnector(either, "Or");
  await ui.addCondition(either, { field: "balance", operator: "GreaterThan", values: ["20000"] });
}

/** A cell's text for a value, as the page writes it (results.js cellText). */
export const cellText = (value: unknown): string => (value === null || value === undefined ? "—" : Array.isArray(value) ? JSON.stringify(value) : String(value));

/** An API row flattened to the page's dotted columns. */
export function flatRow(row: Record<string, unknown>, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, value] of Object.entries(row)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) flatRow(value as Record<string, unknown>, path, out);
    else out[path] = value;
  }
  return out;
}
