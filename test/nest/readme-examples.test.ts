// Every Filter example of the README, both ways, on the seeded sample app: each `curl … /filter
// -d '<json>'` is sent as its JSON body and as its query string (filterToQueryString), and the
// README's GET example (`curl -g '…/filter?…'`) beside the JSON body it says it equals. Both ways
// must give the same status and the same answer (rows, totals; or the same error code and path).
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { fieldDataType, parseFilter } from "../../lib/index.js";
import { filterJsonFromQueryString, filterToQueryString } from "../../lib/client/query-string.js";
import { publicNames } from "../../sample-app/domain/entities.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

interface Example {
  readonly entity: string;
  readonly token: string;
  readonly json: unknown;
  /** The README's own query string, for the GET example. */
  readonly search?: string;
}

/** The README's commands, each with its continuation lines joined. */
function commands(): string[] {
  return readme.replace(/\\\n\s*/g, " ").split("\n").filter((line) => line.trim().startsWith("curl "));
}

function examples(): Example[] {
  const found: Example[] = [];
  for (const command of commands()) {
    const route = /\/api\/(\w+)\/filter/.exec(command);
    const token = /Bearer (dev-\w+)/.exec(command);
    if (!route || !token) continue;
    // A body spans lines inside its quotes: read it from the README text itself, not the joined line.
    const at = readme.indexOf(command.slice(0, 60).trim().split(" -H")[0]!);
    const body = /-d '([^']*)'/.exec(readme.slice(at, at + 2000).replace(/\\\n\s*/g, " "));
    if (body && !command.includes("filter?")) found.push({ entity: route[1]!, token: token[1]!, json: JSON.parse(body[1]!) });
  }
  // The GET example: its URL, and the JSON of the comment under it ("# the same answer as POST … with").
  const get = /curl -g -s '[^']*\/api\/(\w+)\/filter\?([^']*)'[^\n]*\n\s*-H 'authorization: Bearer (dev-\w+)'\n# the same answer as POST[^\n]*\n((?:# [^\n]*\n)+)/.exec(readme);
  if (get) {
    const json = get[4]!.split("\n").map((line) => line.replace(/^#\s?/, "")).join("");
    found.push({ entity: get[1]!, search: get[2]!, token: get[3]!, json: JSON.parse(json) });
  }
  return found;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** What the two ways must share: the rows and totals, or the refusal. */
const essence = (answer: Answer) =>
  answer.status === 200
    ? { status: 200, data: answer.body.data, totalCount: answer.body.totalCount, pageCount: answer.body.pageCount, pageNumber: answer.body.pageNumber, pageSize: answer.body.pageSize }
    : { status: answer.status, code: answer.body.code, path: answer.body.path };

describe("README: every Filter example answers the same as a JSON body and as a query string", function () {
  let app: SampleApp;
  before(async () => {
    app = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
  });
  after(() => app?.close());

  const call = async (method: "GET" | "POST", path: string, token: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${app.url}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const found = examples();
  it("finds the README's examples (four JSON bodies on /filter and the GET example)", () => {
    expect(found.filter((e) => e.search === undefined)).to.have.length(4);
    expect(found.filter((e) => e.search !== undefined)).to.have.length(1);
  });

  for (const [i, example] of found.entries()) {
    it(`example ${i + 1}: ${example.token} on ${example.entity}${example.search ? " (the README's GET link)" : ""}`, async () => {
      const entity = publicNames.find(([, name]) => name === example.entity)![0];
      const search = example.search ?? filterToQueryString(parseFilter(example.json), { dataTypeOf: (field) => fieldDataType(entity, field) });
      if (example.search) {
        // The README's link is the query string of the JSON it shows.
        const read = filterJsonFromQueryString(example.search, (field) => fieldDataType(entity, field));
        expect(parseFilter(read)).to.deep.equal(parseFilter(example.json));
      }
      const posted = await call("POST", `/api/${example.entity}/filter`, example.token, example.json);
      const linked = await call("GET", `/api/${example.entity}/filter?${search}`, example.token);
      expect(essence(linked), search).to.deep.equal(essence(posted));
      // Not vacuous: each example answers what the README says it does (rows, or its refusal).
      expect([200, 403]).to.include(posted.status);
      if (posted.status === 200) expect((posted.body.data as unknown[]).length).to.be.greaterThan(0);
    });
  }
});
