// The filter page's privacy panel (#45, sample-app/public/js/privacy.js) in a real browser: as Ben
// (balance is private for analysts), a Summary of the average balance per segment, built by
// clicking (Average now offers balance to him), shows each group's noisy average with its 95 %
// interval and the ε charged and left; run again, the stored answer, no ε charged. A Summary
// without a private aggregate shows no panel.
import { expect } from "chai";
import type { Page } from "playwright-core";
import type { SampleApp } from "../../sample-app/main.js";
import { samplePrivacyBudget } from "../../sample-app/app.module.js";
import { FilterPage } from "./filter-page.js";
import { type ConsoleWatch, screenshotPath, useAppPage } from "./support.js";

describe("filter page (Chromium): the privacy panel", function () {
  let app: SampleApp;
  let page: Page;
  let ui: FilterPage;
  let console_: ConsoleWatch;
  useAppPage({ width: 1280, height: 800 }, async (session) => {
    ({ app, page, console: console_ } = session);
    ui = new FilterPage(page, app.url);
    await ui.open();
  });

  it("shows Ben's noisy averages with their intervals and the budget left; the same Summary again is free", async () => {
    await ui.asCaller("dev-ben");
    await ui.mode("summary");
    await ui.pick("group by", "segment");
    const first = page.locator("#editor ul.aggregates > li").first();
    await first.getByLabel("Aggregate 1: function").selectOption("Average");
    const averageable = await first.getByLabel("Aggregate 1: field").locator("option").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(averageable).to.include("balance");
    await first.getByLabel("Aggregate 1: field").selectOption("balance");
    expect(await ui.run()).to.equal("done");
    const panel = page.locator(".results section.privacy");
    expect(await panel.getAttribute("data-cached")).to.equal("false");
    expect(Number(await panel.getAttribute("data-remaining"))).to.equal(samplePrivacyBudget - 0.5);
    expect(await panel.locator(".privacy-summary").innerText()).to.match(/ε charged: 0\.5 · ε left today: 19\.5/);
    // One interval per segment, each "<segment>: <average> ± <half-width>".
    const intervals = await panel.locator(".interval").allInnerTexts();
    expect(intervals).to.have.length(3);
    for (const text of intervals) expect(text).to.match(/^(Retail|SmallBusiness|Enterprise): -?[\d,.]+ ± [\d,.]+$/);
    await page.screenshot({ path: screenshotPath("privacy-panel"), fullPage: true });
    expect(await ui.run()).to.equal("done");
    expect(await panel.getAttribute("data-cached")).to.equal("true");
    expect(await panel.locator(".privacy-summary").innerText()).to.include("no ε charged");
    // A Summary with no private aggregate: no panel.
    await first.getByLabel("Aggregate 1: function").selectOption("Count");
    await first.getByLabel("Aggregate 1: field").selectOption("");
    expect((await ui.json()).groupBy.aggregateBy[0].field ?? null).to.equal(null);
    expect(await ui.run()).to.equal("done");
    expect(await page.locator(".results section.privacy").count()).to.equal(0);
    console_.assertClean();
  });
});
