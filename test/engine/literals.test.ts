// Values that mean something to SQL or to LIKE are matched literally, on every target: quotes,
// comment markers, `%`, `_`, `\` (MySQL's LIKE escape), `!` (QueryLib's LIKE escape), JSON-ish
// injection text. Expectations come from a plain-JS oracle over the seeded rows (exact substring
// semantics). With getQueryString the SQL text never contains a value: every value is a bound
// parameter, listed after `\n-- parameters:`.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { Customer } from "../domain/entities.js";
import { seededData } from "../support/databases.js";
import { forEachTarget, type TargetContext } from "../support/targets.js";

type Shape = Record<string, unknown>;
interface Result {
  totalCount: number;
  pageCount: number;
  data: { id: number }[];
  queryString: string | null;
}

function where(field: string, operator: string, values: unknown[]): Shape {
  return { conditionGroup: { connector: "And", conditions: [{ sort: 1, field, dataType: "Text", operator, values }] } };
}

async function run(ctx: TargetContext, shape: Shape, getQueryString = false): Promise<Result> {
  if (ctx.target === "memory") return toList(ctx.data().customers as ObjectLiteral[], shape, getQueryString) as unknown as Result;
  return (await toListAsync(ctx.dataSource().getRepository(Customer), shape as never, getQueryString)) as unknown as Result;
}

/** Exact, case-sensitive substring semantics (I… operators: both sides lower-cased), null guard. */
function oracle(operator: string, field: string | null, values: string[]): boolean {
  if (field === null) return false;
  const needle = values[0].trim();
  switch (operator) {
    case "Equal":
      return field === needle;
    case "Contains":
      return field.includes(needle);
    case "NotContains":
      return !field.includes(needle);
    case "StartsWith":
      return field.startsWith(needle);
    case "EndsWith":
      return field.endsWith(needle);
    case "IContains":
      return field.toLowerCase().includes(needle.toLowerCase());
    case "IStartsWith":
      return field.toLowerCase().startsWith(needle.toLowerCase());
    case "In":
      return values.some((value) => field === value.trim());
    case "IIn":
      return values.some((value) => field.toLowerCase() === value.trim().toLowerCase());
    default:
      throw new Error(`test bug: ${operator}`);
  }
}

const FIELDS: Record<string, (c: Customer) => string | null> = {
  name: (c) => c.name,
  notes: (c) => c.notes,
};

/** The values under test: injection strings, LIKE wildcards and escapes, quotes. */
const SPECIALS = [
  "x' OR 1=1 --",
  "50%_off\\",
  "\"}); drop table",
  "Robert'); DROP TABLE customer;--",
  "%",
  "_",
  "\\",
  "!",
  "'",
  "\"",
  "%_",
  "_b%",
  "a%c",
  "a_b",
  "!%",
  "\\%",
  "off\\",
  "100%",
  "' OR '1'='1",
  "*/",
  "[bracket]",
  "{brace}",
];

const SINGLE_OPERATORS = ["Equal", "Contains", "NotContains", "StartsWith", "EndsWith", "IContains", "IStartsWith"];

function expectedIds(field: string, operator: string, values: string[]): number[] {
  return seededData()
    .customers.filter((c) => oracle(operator, FIELDS[field](c), values))
    .map((c) => c.id);
}

/** The SQL part of a queryString and its parameters (a JSON array). */
function splitQueryString(queryString: string | null): { sql: string; parameters: unknown[] } {
  assert.ok(queryString, "getQueryString: true must give a queryString");
  const marker = "\n-- parameters: ";
  const at = queryString.lastIndexOf(marker);
  assert.ok(at > 0, `no parameters marker in ${queryString}`);
  const parameters = JSON.parse(queryString.slice(at + marker.length)) as unknown;
  assert.ok(Array.isArray(parameters));
  return { sql: queryString.slice(0, at), parameters };
}

/** A LIKE pattern parameter with its `!` escapes removed and the outer wildcards dropped. */
function unescapeLike(parameter: string): string {
  const chars: { char: string; escaped: boolean }[] = [];
  for (let i = 0; i < parameter.length; i++) {
    if (parameter[i] === "!" && i + 1 < parameter.length) chars.push({ char: parameter[++i], escaped: true });
    else chars.push({ char: parameter[i], escaped: false });
  }
  if (chars.length > 0 && chars[0].char === "%" && !chars[0].escaped) chars.shift();
  if (chars.length > 0 && chars[chars.length - 1].char === "%" && !chars[chars.length - 1].escaped) chars.pop();
  return chars.map((c) => c.char).join("");
}

describe("Literals: the data has the special values", () => {
  it("names and notes hold the injection and LIKE strings", () => {
    const customers = seededData().customers;
    for (const value of ["x' OR 1=1 --", "50%_off\\", "Robert'); DROP TABLE customer;--"]) assert.ok(customers.some((c) => c.name === value), value);
    for (const value of ["x' OR 1=1 --", "50%_off\\", "\"}); drop table", "a_b%c", "100% satisfied"]) assert.ok(customers.some((c) => c.notes === value), value);
  });

  it("wildcard needles that must not act as wildcards match fewer rows than the wildcard would", () => {
    // If `_` or `%` leaked as a LIKE wildcard, Contains would match (nearly) every non-null row.
    const notNull = seededData().customers.filter((c) => c.notes !== null).length;
    for (const needle of ["%", "_", "a%c", "!%", "\\%"]) {
      assert.ok(expectedIds("notes", "Contains", [needle]).length < notNull / 2, needle);
    }
    assert.equal(expectedIds("notes", "Contains", ["a%c"]).length, 0);
    assert.equal(expectedIds("notes", "Contains", ["!"]).length, 0);
  });
});

forEachTarget("Literals", (ctx) => {
  for (const field of Object.keys(FIELDS)) {
    describe(`${field}: special values match literally`, () => {
      for (const operator of SINGLE_OPERATORS) {
        for (const value of SPECIALS) {
          it(`${operator} ${JSON.stringify(value)}`, async () => {
            const expected = expectedIds(field, operator, [value]);
            const result = await run(ctx, where(field, operator, [value]));
            assert.deepEqual(result.data.map((row) => row.id), expected);
            assert.equal(result.totalCount, expected.length);
          });
        }
      }

      it("In with every special value matches exactly those values", async () => {
        const expected = expectedIds(field, "In", SPECIALS);
        assert.ok(expected.length > 0);
        const result = await run(ctx, where(field, "In", SPECIALS));
        assert.deepEqual(result.data.map((row) => row.id), expected);
      });

      it("IIn with upper-cased special values", async () => {
        const values = SPECIALS.map((value) => value.toUpperCase());
        const expected = expectedIds(field, "IIn", values);
        assert.ok(expected.length > 0);
        const result = await run(ctx, where(field, "IIn", values));
        assert.deepEqual(result.data.map((row) => row.id), expected);
      });
    });
  }

  it("the injection name is found by Equal exactly once per row holding it, and nothing else", async () => {
    const result = await run(ctx, where("name", "Equal", ["x' OR 1=1 --"]));
    assert.deepEqual(result.data.map((row) => row.id), [13]);
  });

  it("a trailing backslash value works with every LIKE-based operator", async () => {
    for (const operator of ["EndsWith", "Contains", "IContains"]) {
      const expected = expectedIds("name", operator, ["_off\\"]);
      assert.ok(expected.includes(12));
      const result = await run(ctx, where("name", operator, ["_off\\"]));
      assert.deepEqual(result.data.map((row) => row.id), expected, operator);
    }
  });

  if (ctx.target !== "memory") {
    describe("getQueryString: values are parameters, never SQL text", () => {
      const placeholder = ctx.target === "postgres" ? /\$\d+/ : /\?/;
      // Values distinctive enough that their absence from the SQL text proves something.
      const distinctive = ["x' OR 1=1 --", "50%_off\\", "\"}); drop table", "Robert'); DROP TABLE customer;--", "' OR '1'='1"];
      // A value list is ONE parameter on SQLite (JSON text) and PostgreSQL (an array): read as its values.
      const bound = (parameters: unknown[]) =>
        parameters.flatMap((p) => (Array.isArray(p) ? p : ctx.target === "sqlite" && typeof p === "string" && p.startsWith("[") ? (JSON.parse(p) as unknown[]) : [p]));

      for (const operator of [...SINGLE_OPERATORS, "In"]) {
        for (const value of distinctive) {
          it(`${operator} ${JSON.stringify(value)}: not in the SQL, in the parameters`, async () => {
            const values = operator === "In" ? [value, "plain"] : [value];
            const result = await run(ctx, where("notes", operator, values), true);
            const expected = expectedIds("notes", operator, values);
            assert.deepEqual(result.data.map((row) => row.id), expected);
            const { sql, parameters: raw } = splitQueryString(result.queryString);
            const parameters = bound(raw);
            assert.ok(!sql.includes(value), `the SQL contains ${value}: ${sql}`);
            assert.ok(!sql.toLowerCase().includes(value.toLowerCase()), `the SQL contains ${value} (any case)`);
            assert.match(sql, placeholder);
            assert.ok(
              parameters.some((p) => typeof p === "string" && (p === value || unescapeLike(p) === value || p.toLowerCase() === value.toLowerCase() || unescapeLike(p).toLowerCase() === value.toLowerCase())),
              `no parameter holds ${value}: ${JSON.stringify(parameters)}`,
            );
          });
        }
      }

      it("In with several values binds each of them", async () => {
        const values = ["x' OR 1=1 --", "50%_off\\", "\"}); drop table"];
        const result = await run(ctx, where("notes", "In", values), true);
        const { sql, parameters } = splitQueryString(result.queryString);
        for (const value of values) {
          assert.ok(!sql.includes(value));
          assert.ok(bound(parameters).includes(value), `${value} not among ${JSON.stringify(parameters)}`);
        }
        // MariaDB: one placeholder per value; SQLite and PostgreSQL: the list as one parameter.
        const placeholders = (sql.match(ctx.target === "postgres" ? /\$\d+/g : /\?/g) ?? []).length;
        assert.equal(ctx.target === "mariadb" ? placeholders >= values.length : placeholders === 1, true, sql);
      });

      it("short specials (%, _, \\, !, quotes) are parameters too", async () => {
        for (const value of ["%", "_", "\\", "!", "'", "\""]) {
          const result = await run(ctx, where("notes", "Equal", [`qz${value}qz`]), true);
          const { sql, parameters } = splitQueryString(result.queryString);
          assert.ok(!sql.includes(`qz${value}qz`) && !sql.includes("qz"), sql);
          assert.ok(parameters.includes(`qz${value}qz`), JSON.stringify(parameters));
        }
      });
    });
  }
});
