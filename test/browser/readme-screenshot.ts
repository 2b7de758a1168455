// Takes the README's picture of the filter page, docs/images/filter-page.png: the sample app,
// Chromium at 1280×800, Ben (an analyst) running the tour's two-group filter on customers, with
// masked, tokenized and generalized columns and the policy trace. Run: `npm run screenshot`.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { FilterPage, buildTwoGroupFilter } from "./filter-page.js";
import { launchChromium, repositoryRoot, startApp } from "./support.js";

const target = join(repositoryRoot, "docs", "images", "filter-page.png");
const app = await startApp();
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const ui = new FilterPage(page, app.url);
  await ui.open();
  await ui.asCaller("dev-ben");
  await buildTwoGroupFilter(ui);
  for (const column of ["id", "name", "nationalId", "birthDate", "balance", "contact.email"]) await ui.pick("add column", column);
  await ui.sortBy("id");
  await ui.pageSize(8);
  if ((await ui.run()) !== "done") throw new Error(`the tour's query failed: ${await page.locator("#banner").innerText()}`);
  await page.locator("#run").focus();
  mkdirSync(join(repositoryRoot, "docs", "images"), { recursive: true });
  await page.screenshot({ path: target, fullPage: true });
  console.log(`wrote ${target}`);
} finally {
  await browser.close();
  await app.close();
}
