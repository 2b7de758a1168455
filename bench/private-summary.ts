// The cost of a private Summary against the same exact Summary (#45, BENCHMARKS.md "Private
// aggregates"). One table of accounts (segment: 8 declared values; region: 40 free-form values;
// amount: an int), the same guarded engine for both: a clerk's Summary is exact, an analyst's is
// private (a Private rule on amount: clamped in SQL, noised, released, charged). Each call is a
// caller of its own (prepared before timing), so no call is another's sticky answer and each
// private call charges the ledger; "sticky" repeats one caller's Summary (its stored answer).
// Variants are interleaved round by round; the median of each is reported, and its ratio to the
// exact Summary's.
//
//   node dist/bench/private-summary.js [--rows=100000] [--rounds=301] [--dialects=sqlite,postgres]
import "reflect-metadata";
import { Column, type DataSource, Entity, PrimaryColumn } from "typeorm";
import {
  type IQpBudgetLedger, PolicyEffect, QpAllowedValues, QpEntityCatalogue, QpInMemoryBudgetLedger, QpInMemoryRuleStore, type QpPolicyContext, QpPolicyEngine,
  QpSubjectKind, QpTypeOrmBudgetLedger, applyPolicy, QpPolicyContext as Context,
} from "../lib/index.js";
import { type Dialect, dialects as allDialects } from "../test/support/target-list.js";
import { openIsolatedDatabase } from "../test/support/databases.js";

const segments = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"];

@Entity("pb_account")
class PbAccount {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpAllowedValues(segments) @Column({ type: "varchar", length: 20 }) segment!: string;
  @Column({ type: "varchar", length: 20 }) region!: string;
  @Column({ type: "int" }) amount!: number;
}

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const ROWS = Number(arg("rows") ?? 100_000);
const ROUNDS = Number(arg("rounds") ?? 301);
const DIALECTS = (arg("dialects")?.split(",") ?? allDialects) as Dialect[];

/** W5's shape on this table: a Where, one declared key, Count, Sumation and Average, a Having, orders, a page. */
const bySegment = {
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "segment", dataType: "Text", operator: "In", values: segments.slice(0, 6) }], subConditionGroups: [] },
  groupBy: { fields: ["segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { field: "amount", alias: "total", aggregator: "Sumation" }, { field: "amount", alias: "mean", aggregator: "Average" }] },
  having: { connector: "And", conditions: [{ sort: 1, field: "n", dataType: "Number", operator: "GreaterThanOrEqual", values: [5] }], subConditionGroups: [] },
  orders: [{ sort: 1, field: "n", direction: "Descending" }],
  page: { pageNumber: 1, pageSize: 20 },
};
/** The same on a free-form key (region): the private one releases groups by a noisy count. */
const byRegion = { ...bySegment, groupBy: { ...bySegment.groupBy, fields: ["region"] } };

async function seed(dataSource: DataSource): Promise<void> {
  const repo = dataSource.getRepository(PbAccount);
  if ((await repo.count()) === ROWS) return;
  await repo.clear();
  for (let i = 0; i < ROWS; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, ROWS - i) }, (_, j) => {
      const id = i + j + 1;
      return { id, segment: segments[id % 8]!, region: `r${(id * 7) % 40}`, amount: (id * 7919) % 12_000 };
    });
    await repo.insert(chunk);
  }
}

async function engineWith(ledger: IQpBudgetLedger): Promise<QpPolicyEngine> {
  const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(PbAccount, "accounts"), lint: "off", caps: { minGroupSize: 5 }, privacyBudget: { ledger, limit: 1e6 } }, { ruleStore: new QpInMemoryRuleStore() });
  await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "amount", effect: PolicyEffect.Private, private: { lower: 0, upper: 10_000, granularity: 1 } });
  return engine;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function benchDialect(dialect: Dialect): Promise<string[]> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_private_bench", [PbAccount, ...QpTypeOrmBudgetLedger.entities]);
  try {
    await seed(dataSource);
    const memory = await engineWith(new QpInMemoryBudgetLedger());
    const relational = await engineWith(new QpTypeOrmBudgetLedger(dataSource));
    const repo = dataSource.getRepository(PbAccount);
    const contexts = async (engine: QpPolicyEngine, role: string, tag: string) => {
      const out: QpPolicyContext[] = [];
      for (let i = 0; i < ROUNDS; i++) out.push(await engine.prepareAsync(new Context().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `${tag}-${i}-${Date.now()}`)));
      return out;
    };
    const variants: { name: string; shape: object; engine: QpPolicyEngine; contexts: QpPolicyContext[] }[] = [];
    for (const [key, shape] of [["declared key", bySegment], ["free-form key", byRegion]] as const) {
      variants.push({ name: `exact, ${key}`, shape, engine: memory, contexts: await contexts(memory, "clerk", `c-${key}`) });
      variants.push({ name: `private, ${key}, in-memory ledger`, shape, engine: memory, contexts: await contexts(memory, "analyst", `a-${key}`) });
      variants.push({ name: `private, ${key}, relational ledger`, shape, engine: relational, contexts: await contexts(relational, "analyst", `r-${key}`) });
      const one = await relational.prepareAsync(new Context().withSubject(QpSubjectKind.Role, "analyst").withSubject(QpSubjectKind.User, `sticky-${key}-${Date.now()}`));
      variants.push({ name: `private, ${key}, relational ledger, sticky repeat`, shape, engine: relational, contexts: Array(ROUNDS).fill(one) });
    }
    const times = variants.map(() => [] as number[]);
    // Warm-up: one call of each (plans, connections).
    for (const v of variants) await applyPolicy(repo as never, v.contexts[0]!).toListAsync(JSON.parse(JSON.stringify(v.shape)));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, v] of variants.entries()) {
        const json = JSON.parse(JSON.stringify(v.shape));
        const start = process.hrtime.bigint();
        await applyPolicy(repo as never, v.contexts[round]!).toListAsync(json);
        times[i]!.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
    const lines: string[] = [];
    for (const [i, v] of variants.entries()) {
      const exact = variants.findIndex((e) => e.name === `exact, ${v.name.split(", ")[1]}`);
      const m = median(times[i]!);
      lines.push(`| ${dialect} | ${v.name} | ${m.toFixed(3)} | ${(m / median(times[exact]!)).toFixed(2)}× |`);
    }
    return lines;
  } finally {
    await dataSource.destroy();
  }
}

const out = ["| database | Summary | median ms | × exact |", "|---|---|--:|--:|"];
for (const dialect of DIALECTS) {
  out.push(...(await benchDialect(dialect)));
  console.error(`${dialect} done`);
}
console.log(`${ROWS} rows, ${ROUNDS} rounds, node ${process.version}\n${out.join("\n")}`);
