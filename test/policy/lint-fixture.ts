// A policy with holes for the command-line test (lint-cli.test.ts): a masked e-mail left
// orderable and filterable by anything.
import { Column, Entity, PrimaryColumn } from "typeorm";
import { MaskStrategy, QpEntityCatalogue, QpMask } from "../../lib/index.js";

@Entity("lint_fixture")
export class LintFixture {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 80 }) email!: string;
}

export default { entities: new QpEntityCatalogue().expose(LintFixture, "fixtures") };
