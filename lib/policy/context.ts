// The caller context: subjects (tenant, roles, user, custom) and named values. Unprepared
// until the engine resolves it through its providers, once per request.
import { QpSubjectKind } from "../shapes/policy-enums.js";

export interface QpSubject {
  readonly kind: QpSubjectKind;
  readonly value: string;
}

export class QpPolicyContext {
  constructor(
    readonly subjects: readonly QpSubject[] = [],
    readonly values: ReadonlyMap<string, unknown> = new Map(),
    /** Set by an engine's prepareAsync; guarded queries refuse a context without it. */
    readonly preparedBy: object | null = null,
    /** Audit events recorded for this context (drained by the host at the end of the request). */
    readonly auditEvents: unknown[] = [],
  ) {
    Object.freeze(this);
  }

  withSubject(kind: QpSubjectKind, value: string): QpPolicyContext {
    return new QpPolicyContext([...this.subjects, { kind, value: String(value) }], this.values, null);
  }

  withValue(name: string, value: unknown): QpPolicyContext {
    const values = new Map(this.values);
    values.set(name, value);
    return new QpPolicyContext(this.subjects, values, null);
  }

  get isPrepared(): boolean {
    return this.preparedBy !== null;
  }

  subjectsOf(kind: QpSubjectKind): string[] {
    return this.subjects.filter((s) => s.kind === kind).map((s) => s.value);
  }
}

/** Hooks an engine calls while preparing a context: extra subjects and values (claims, lookups). */
export interface QpPolicyProviders {
  resolveSubjects?(context: QpPolicyContext): Promise<readonly QpSubject[]> | readonly QpSubject[];
  resolveValues?(context: QpPolicyContext): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Where runtime rules live: in memory by default, or `new QpTypeOrmRuleStore(dataSource)`. */
  ruleStore?: import("../rules/store.js").IQpRuleStore;
  /** The clock snapshots age by (tests). */
  clock?: () => number;
}
