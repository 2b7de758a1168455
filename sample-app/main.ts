// The sample app: seeds an embedded SQLite database and answers Filter, Segment and Summary
// JSON over HTTP on 127.0.0.1. Start it with `npm start`.
import "reflect-metadata";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { DataSource, type ObjectLiteral, type Repository } from "typeorm";
import { LogicException, toListAsync } from "../lib/index.js";
import { Customer, Employee, Order, OrderItem, Product, domainEntities } from "../test/domain/entities.js";
import { generateDomain, insertDomain } from "../test/domain/seed.js";
import { sampleDataSourceOptions } from "../ormconfig.js";

const port = Number(process.env.PORT ?? 3000);
const host = "127.0.0.1";

export async function startSampleApp(listenPort = port): Promise<{ url: string; close(): Promise<void> }> {
  const dataSource = await new DataSource(sampleDataSourceOptions(domainEntities)).initialize();
  await insertDomain(dataSource, generateDomain({ customers: Number(process.env.SAMPLE_CUSTOMERS ?? 2000) }));
  const repositories: Record<string, Repository<ObjectLiteral>> = {
    customers: dataSource.getRepository(Customer),
    orders: dataSource.getRepository(Order),
    items: dataSource.getRepository(OrderItem),
    products: dataSource.getRepository(Product),
    employees: dataSource.getRepository(Employee),
  };
  const server = createServer((request, response) => void handle(repositories, request, response));
  await new Promise<void>((resolve) => server.listen(listenPort, host, resolve));
  const address = server.address();
  const url = `http://${host}:${typeof address === "object" && address ? address.port : listenPort}`;
  return {
    url,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await dataSource.destroy();
    },
  };
}

async function handle(repositories: Record<string, Repository<ObjectLiteral>>, request: IncomingMessage, response: ServerResponse) {
  const send = (status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  const match = /^\/api\/(\w+)\/query$/.exec(request.url ?? "");
  if (request.method === "GET" && request.url === "/") return send(200, { try: `POST /api/{${Object.keys(repositories).join("|")}}/query with a Filter, Segment or Summary as JSON` });
  if (request.method !== "POST" || !match || !repositories[match[1]!]) return send(404, { message: "not found" });
  try {
    const body = await readBody(request);
    const getQueryString = new URL(request.url!, "http://x").searchParams.get("sql") === "true";
    send(200, await toListAsync(repositories[match[1]!]!, body, getQueryString));
  } catch (error) {
    if (error instanceof LogicException) return send(400, { code: error.code, message: error.message });
    console.error(error);
    send(500, { message: "internal error" });
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8") || "{}";
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/").split("/").pop()!)) {
  const app = await startSampleApp();
  console.log(`QueryLib sample app on ${app.url} (SQLite, seeded). Try:`);
  console.log(`  curl -s ${app.url}/api/customers/query -H 'content-type: application/json' -d '{"conditionGroup":{"conditions":[{"sort":1,"field":"contact.city","dataType":"Text","operator":"IContains","values":["zür"]}]},"selects":["id","name","contact.city"],"page":{"pageNumber":1,"pageSize":5}}'`);
  console.log(`  curl -s ${app.url}/api/customers/query -H 'content-type: application/json' -d '{"groupBy":{"fields":["tier"],"aggregateBy":[{"alias":"customers","aggregator":"Count"},{"field":"balance","alias":"avgBalance","aggregator":"Average"}]}}'`);
}
