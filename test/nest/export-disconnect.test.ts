// An export route's client that goes away mid-export (issue #44): the server stops reading, on
// every database. 20,000 rows of a kilobyte in batches of 25 (MaxPageSize) would take 800
// statements; the client reads the first chunk and aborts (the rows are large so that they do not
// all fit in the loopback socket's buffers first: backpressure is what stops the writes). Counted with the DataSource's own logger: a handful of
// statements, then none, however long one waits; the request's audit event is recorded once; and
// the next export on the same server runs to its end (no connection was left taken: on MariaDB and
// PostgreSQL the pool, on SQLite the one connection).
import { expect } from "chai";
import "reflect-metadata";
import { type DynamicModule, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import { PolicyFeature, QpAudit, QpEntity } from "../../lib/index.js";
import { QpInMemoryAuditSink, QueryLibModule } from "../../nest-module/index.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, dialects } from "../support/targets.js";
import { RecordingLogger } from "../support/query-logging.js";
import { testAuthentication } from "./support.js";

@QpEntity({ requirePolicy: true })
@Entity("export_item")
class ExportItem {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpAudit(PolicyFeature.Select) @Column({ type: "varchar", length: 1000 }) label!: string;
}

const ROWS = 20_000;
/** A kilobyte a row: 20 MB in all, more than the loopback socket's buffers hold, so a client that stops reading stops the server's writes. */
const labelOf = (id: number) => `item ${id} `.padEnd(1000, "x");
const logger = new RecordingLogger();

async function openAndSeed(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_export_http", [ExportItem]);
  const repository = dataSource.getRepository(ExportItem);
  for (let start = 1; start <= ROWS; start += 1000) {
    await repository.insert(Array.from({ length: 1000 }, (_, i) => ({ id: start + i, label: labelOf(start + i) })));
  }
  // From here on, every statement is counted (TypeORM's query() and QueryLib's own reads both tell the logger).
  Object.assign(dataSource.options, { logging: true, logger });
  (dataSource as unknown as { logger: RecordingLogger }).logger = logger;
  return dataSource;
}

function appModule(dataSource: DataSource, sink: QpInMemoryAuditSink): DynamicModule {
  @Module({})
  class ExportAppModule {}
  return {
    module: ExportAppModule,
    imports: [
      QueryLibModule.forRoot({ policies: { Caps: { MaxPageSize: 25 } }, configure: (options) => { options.entities.expose(ExportItem, "items"); }, audit: { sink }, dataSource }),
      QueryLibModule.forFeature([{ entity: ExportItem, path: "items", shapes: ["filter"], exports: true }]),
    ],
  };
}

const selects = (sql: string) => /^\s*(SET STATEMENT [^;]*? FOR )?SELECT/i.test(sql) && sql.includes("export_item");
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnTargets("Export route: a client that goes away", dialects, openAndSeed, (_target, dataSource) => {
  let close: () => Promise<void>;
  let url: string;
  let sink: QpInMemoryAuditSink;
  before(async () => {
    sink = new QpInMemoryAuditSink();
    const app = await NestFactory.create(appModule(dataSource(), sink), { logger: false, abortOnError: false });
    app.use(testAuthentication);
    await app.listen(0, "127.0.0.1");
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    close = () => app.close();
  });
  after(() => close?.());

  const headers = (id: string) => ({ "x-test-claims": JSON.stringify({ sub: "ann" }), "x-request-id": id, accept: "application/x-ndjson" });

  it("stops reading when the client aborts after the first chunk; audited once; the next export runs to its end", async () => {
    logger.queries.length = 0;
    const controller = new AbortController();
    const response = await fetch(`${url}/items/export?order=id`, { headers: headers("abandoned"), signal: controller.signal });
    expect(response.status).to.equal(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).to.equal(false);
    controller.abort();
    await reader.cancel().catch(() => {});
    await pause(500);
    const afterAbort = logger.queries.filter((q) => selects(q.sql)).length;
    await pause(1000);
    const later = logger.queries.filter((q) => selects(q.sql)).length;
    expect(later, "no statement after the client left").to.equal(afterAbort);
    // What the socket's buffers took before the writes waited (a few MB): far from every batch.
    expect(afterAbort, `${afterAbort} statements of ${ROWS / 25} batches`).to.be.lessThan(ROWS / 25 / 2);
    // One audit event for the abandoned request (its label was selected), not one a batch.
    const abandoned = sink.events.filter((e) => (e as { clientRequestId?: string }).clientRequestId === "abandoned");
    expect(abandoned.length, JSON.stringify(sink.events.slice(0, 3))).to.equal(1);
    // The server is free: a whole export of a narrower request runs to its end.
    const whole = await fetch(`${url}/items/export?where[id][LessThanOrEqual]=1000&order=id`, { headers: headers("whole") });
    const lines = (await whole.text()).trimEnd().split("\n");
    expect(lines.length).to.equal(1000);
    expect(JSON.parse(lines[999]!)).to.deep.equal({ id: 1000, label: labelOf(1000) });
  });
});
