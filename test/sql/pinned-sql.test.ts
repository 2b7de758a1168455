// The SQL text and parameters of a core set of requests, pinned per dialect (Kysely's `testSql`
// habit): a change to a compiler shows up here as a diff of SQL, to be read and accepted, not as a
// surprise in a result. The expected texts live in test/sql/pinned-sql.json; after a deliberate
// change, `QL_PIN_SQL=update` rewrites that file (review it with `git diff`).
import assert from "node:assert/strict";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { DataSource, ObjectLiteral, Repository } from "typeorm";
import { QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, applyPolicy, toStatements } from "../../lib/index.js";
import { Customer, Order, OrderItem } from "../domain/entities.js";
import { Patient } from "../policy/domain.js";
import { policyDatabase } from "../policy/policy-targets.js";
import { schemaLearning } from "../../lib/pipeline/source.js";
import { type Dialect, dialects, seededDatabase, skipIfUnavailable } from "../support/databases.js";

const file = fileURLToPath(new URL("../../../test/sql/pinned-sql.json", import.meta.url));
const updating = process.env.QL_PIN_SQL === "update";

type Shape = Record<string, unknown>;
interface Case { readonly root: Function; readonly shape: Shape; readonly guarded?: boolean }
const cond = (sort: number, field: string, dataType: string, operator: string, values: unknown[]): Shape => ({ sort, field, dataType, operator, values });

/** One request per compiler path worth reviewing: operators, paths, shapes, paging, policy. */
export const pinnedCases: Record<string, Case> = {
  "filter: equality, range, order, page": {
    root: Customer,
    shape: {
      conditionGroup: { conditions: [cond(1, "tier", "Enum", "Equal", ["Gold"]), cond(2, "balance", "Number", "Between", [100, 2_000])] },
      orders: [{ sort: 1, field: "createdAt", direction: "Descending" }], page: { pageNumber: 2, pageSize: 10 },
    },
  },
  "filter: text operators, exact and case-insensitive": {
    root: Customer,
    shape: {
      conditionGroup: {
        connector: "Or",
        conditions: [
          cond(1, "name", "Text", "Equal", ["Alice"]), cond(2, "name", "Text", "IEqual", ["alice"]), cond(3, "notes", "Text", "Contains", ["50%_off"]),
          cond(4, "notes", "Text", "IStartsWith", ["vip"]), cond(5, "address.city", "Text", "NotEndsWith", ["burg"]),
        ],
      },
    },
  },
  "filter: value lists and nulls": {
    root: Customer,
    shape: { conditionGroup: { conditions: [cond(1, "id", "Number", "In", [1, 2, 3]), cond(2, "name", "Text", "INotIn", ["Bob", "Eve"]), cond(3, "score", "Number", "IsNull", [])] } },
  },
  "filter: dates, booleans and guids": {
    root: Customer,
    shape: {
      conditionGroup: {
        conditions: [
          cond(1, "createdAt", "DateTime", "GreaterThanOrEqual", ["2021-03-04T05:06:07.500Z"]), cond(2, "birthDate", "Date", "LessThan", ["1990-01-01"]),
          cond(3, "isActive", "Boolean", "Equal", [true]), cond(4, "externalId", "Guid", "NotEqual", ["6F9619FF-8B86-D011-B42D-00C04FC964FF"]),
        ],
      },
    },
  },
  "filter: instant ranges, whole seconds and fractions": {
    root: Customer,
    shape: {
      conditionGroup: {
        conditions: [
          cond(1, "createdAt", "DateTime", "Between", ["2022-01-01T00:00:00.000Z", "2023-12-31T23:59:59.000Z"]),
          cond(2, "createdAt", "DateTime", "NotBetween", ["2022-06-01T00:00:00.250Z", "2022-06-30T00:00:00.000Z"]),
        ],
      },
    },
  },
  "filter: a reference path and a selection": {
    root: Order,
    shape: { conditionGroup: { conditions: [cond(1, "customer.contact.city", "Text", "Equal", ["Oslo"])] }, selects: ["id", "total", "customer.name"] },
  },
  "filter: collections, ORed ones sharing one EXISTS": {
    root: Customer,
    shape: {
      conditionGroup: {
        connector: "Or",
        conditions: [cond(1, "orders.items.quantity", "Number", "Equal", [5]), cond(2, "orders.total", "Number", "GreaterThan", [1_000]), cond(3, "orders.items.sku", "Text", "StartsWith", ["SKU-00"])],
      },
    },
  },
  "filter: an order across two collections": {
    root: Customer,
    shape: { orders: [{ sort: 1, field: "orders.items.unitPrice", direction: "Descending" }, { sort: 2, field: "orders.placedAt" }], page: { pageNumber: 1, pageSize: 5 } },
  },
  "filter: collection selected": {
    root: Order,
    shape: { conditionGroup: { conditions: [cond(1, "id", "Number", "LessThan", [4])] }, selects: ["id", "items.sku"] },
  },
  "segment: union, intersect, except": {
    root: Customer,
    shape: {
      conditionSets: [
        { sort: 1, conditionGroup: { conditions: [cond(1, "tier", "Enum", "Equal", ["Gold"])] } },
        { sort: 2, intersection: "Union", conditionGroup: { conditions: [cond(1, "balance", "Number", "GreaterThan", [5_000])] } },
        { sort: 3, intersection: "Intersect", conditionGroup: { conditions: [cond(1, "isActive", "Boolean", "Equal", [true])] } },
        { sort: 4, intersection: "Except", conditionGroup: { conditions: [cond(1, "orders.status", "Enum", "Equal", ["Cancelled"])] } },
      ],
      page: { pageNumber: 1, pageSize: 20 },
    },
  },
  "summary: keys, aggregates, having, order, page": {
    root: OrderItem,
    shape: {
      conditionGroup: { conditions: [cond(1, "quantity", "Number", "GreaterThan", [1])] },
      groupBy: {
        fields: ["sku", "order.status"],
        aggregateBy: [{ alias: "n", aggregator: "Count" }, { field: "unitPrice", alias: "avgPrice", aggregator: "Average" }, { field: "quantity", alias: "most", aggregator: "Maximum" }],
      },
      having: { conditions: [cond(1, "n", "Number", "GreaterThanOrEqual", [2])] },
      orders: [{ sort: 1, field: "n", direction: "Descending" }], page: { pageNumber: 1, pageSize: 10 },
    },
  },
  "guarded filter: forced tenant, alias, default page": {
    root: Patient, guarded: true,
    shape: { conditionGroup: { conditions: [cond(1, "mail", "Text", "In", ["p1@example.com", "p2@example.com"])] }, orders: [{ sort: 1, field: "name" }] },
  },
  "guarded summary: forced tenant and the group floor": {
    root: Patient, guarded: true,
    shape: { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } },
  },
};

/** Parameters as JSON can say them: Dates by their ISO text, bigints by their digits. */
const plain = (value: unknown): unknown =>
  value instanceof Date ? { $date: value.toISOString() } : typeof value === "bigint" ? { $bigint: String(value) } : Array.isArray(value) ? value.map(plain) : value;
const pinned = (statement: { sql: string; parameters: readonly unknown[] } | null) => (statement ? { sql: statement.sql, parameters: statement.parameters.map(plain) } : null);

type Snapshot = Record<string, Record<string, unknown>>;
const stored: Snapshot = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {};
const written: Snapshot = {};

async function statementsFor(dialect: Dialect, c: Case) {
  if (!c.guarded) {
    const dataSource = await seededDatabase(dialect);
    const repository = dataSource.getRepository(c.root as typeof Customer) as Repository<ObjectLiteral>;
    // toStatements compiles with what the dialect knows of the schema so far (toListAsync waits
    // for it): the pinned text is the one after it learned (MariaDB's ENUM columns).
    await schemaLearning(repository);
    return toStatements(repository, c.shape as never);
  }
  const dataSource: DataSource = await policyDatabase(dialect);
  const engine = new QpPolicyEngine({ tier: QpTier.Convenience });
  const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-1").withValue("tenantId", "t-1"));
  const { data, count } = await applyPolicy(dataSource.getRepository(c.root as typeof Patient), context).toStatementsAsync(c.shape as never);
  return { data, count };
}

describe("Pinned SQL: the statements of a core set of requests, per dialect", () => {
  after(() => {
    if (!updating) return;
    const merged: Snapshot = {};
    for (const name of Object.keys(pinnedCases)) merged[name] = { ...stored[name], ...written[name] };
    fs.writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
    console.log(`      rewrote ${file}`);
  });

  for (const dialect of dialects) {
    describe(dialect, () => {
      for (const [name, c] of Object.entries(pinnedCases)) {
        it(name, async function () {
          let statements;
          try {
            statements = await statementsFor(dialect, c);
          } catch (error) {
            skipIfUnavailable(this, error);
          }
          const actual = { data: pinned(statements.data), count: pinned(statements.count) };
          (written[name] ??= {})[dialect] = actual;
          if (updating) return;
          assert.ok(stored[name]?.[dialect], `no pinned SQL for "${name}" on ${dialect}: run with QL_PIN_SQL=update and review the diff`);
          assert.deepEqual(actual, stored[name]![dialect]);
        });
      }
    });
  }
});
