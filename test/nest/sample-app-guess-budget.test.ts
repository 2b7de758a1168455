// The sample app's guess budget (issue #42): under inference protection a request may test a
// masked e-mail against 10 values (MaxProtectedInValues), and the budget caps what one user may
// test in a day (sampleGuessBudget, 50 a field). The attack is a dictionary run on Ben's masked
// contact.email, ten candidates a request: without the budget it goes on for as long as the
// dictionary lasts; with it, the 51st guess of the day is refused with 429 GuessBudgetExhausted
// (after the five requests that spent the 50), while a lookup by a known e-mail (one guess) works
// and another user's budget is untouched.
import { expect } from "chai";
import { sampleGuessBudget } from "../../sample-app/app.module.js";
import { Customer } from "../../sample-app/domain/entities.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { assertNoStack, call } from "./support.js";

const emailIn = (values: string[]) => ({
  conditionGroup: { conditions: [{ sort: 1, field: "contact.email", dataType: "Text", operator: values.length === 1 ? "Equal" : "In", values }] },
  selects: ["id"],
});

describe("sample app: the guess budget", () => {
  let s: SampleApp;
  before(async () => {
    s = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
  });
  after(() => s?.close());

  const post = async (token: string, body: unknown, route = "customers") => {
    const reply = await call(s.url, "POST", `/api/${route}/filter`, { body, headers: { authorization: `Bearer ${token}` } });
    assertNoStack(reply);
    return reply;
  };

  it("answers a known e-mail, spends 50 guesses a day on a dictionary, then refuses with 429; another user is unaffected", async () => {
    expect(sampleGuessBudget).to.equal(50);
    const known = await s.dataSource.getRepository(Customer).findOne({ where: { tenantId: "acme" }, relations: { contact: true }, order: { id: "ASC" } });
    const email = known!.contact!.email as string;
    const lookup = await post("dev-ben", emailIn([email]));
    expect(lookup.status).to.equal(200);
    expect(lookup.body.data.map((row: { id: number }) => row.id)).to.deep.equal([known!.id]);
    // 1 spent; four lists of 10 and one of 9 spend the other 49.
    const dictionary = Array.from({ length: 60 }, (_, i) => `candidate${i}@nowhere.example`);
    for (let i = 0; i < 5; i++) {
      const reply = await post("dev-ben", emailIn(dictionary.slice(i * 10, i * 10 + (i === 4 ? 9 : 10))));
      expect(reply.status, `request ${i + 1}`).to.equal(200);
    }
    const refused = await post("dev-ben", emailIn([dictionary[59]!]));
    expect(refused.status).to.equal(429);
    expect(refused.body.code).to.equal("GuessBudgetExhausted");
    expect(refused.body.errorCode).to.equal(24);
    // The same column reached from another root (an order's customer) draws on the same allowance.
    const viaOrders = { conditionGroup: { conditions: [{ sort: 1, field: "customer.contact.email", dataType: "Text", operator: "Equal", values: [email] }] }, selects: ["id"] };
    const other = await post("dev-ben", viaOrders, "orders");
    expect(other.status, JSON.stringify(other.body)).to.equal(429);
    expect(other.body.code).to.equal("GuessBudgetExhausted");
    expect((await post("dev-dan", viaOrders, "orders")).status).to.equal(200);
    // A repeat of a request answered before is charged again, so it is refused too.
    expect((await post("dev-ben", emailIn([email]))).status).to.equal(429);
    // Dan (another user, another tenant) has his own budget.
    expect((await post("dev-dan", emailIn(dictionary.slice(0, 10)))).status).to.equal(200);
    // A request that tests no protected field costs nothing and still runs for Ben.
    const free = await post("dev-ben", { conditionGroup: { conditions: [{ sort: 1, field: "segment", dataType: "Enum", operator: "Equal", values: ["Enterprise"] }] }, selects: ["id"] });
    expect(free.status).to.equal(200);
  });

  it("counts one request's allowance per column: ten values on contact.email and ten more through orders.customer.contact.email is CapExceeded", async () => {
    const ten = (tag: string) => Array.from({ length: 10 }, (_, i) => `${tag}${i}@nowhere.example`);
    const list = (field: string, values: string[]) => ({ sort: 1, field, dataType: "Text", operator: "In", values });
    // Each path alone is within the allowance (Erin: a user whose budget nothing else spends).
    const alone = await post("dev-erin", { conditionGroup: { conditions: [list("orders.customer.contact.email", ten("a"))] }, selects: ["id"] });
    expect(alone.status, JSON.stringify(alone.body)).to.equal(200);
    const both = await post("dev-erin", {
      conditionGroup: { connector: "Or", conditions: [list("contact.email", ten("b")), { ...list("orders.customer.contact.email", ten("c")), sort: 2 }] }, selects: ["id"],
    });
    expect(both.status, JSON.stringify(both.body)).to.equal(400);
    expect(both.body.code).to.equal("CapExceeded");
    expect(both.body.path).to.equal("conditionGroup.conditions[1].values");
  });
});
