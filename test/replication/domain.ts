// The read-replica tests' domain: authors (a tokenized code, a collection of books) and books,
// with the rule store's and the token vault's tables, in the isolated database "querylib_replica".
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import { MaskStrategy, QpEntityCatalogue, QpMask, QpTypeOrmRuleStore } from "../../lib/index.js";
import { QpTokenRecord } from "../../lib/vaults/typeorm-vault.js";

@Entity("rep_author")
export class RepAuthor {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 60 }) name!: string;
  @Column({ type: "varchar", length: 20 }) genre!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "rep-code" }) @Column({ type: "varchar", length: 40 }) code!: string;
  @OneToMany(() => RepBook, (b) => b.author) books!: RepBook[];
}

@Entity("rep_book")
export class RepBook {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 80 }) title!: string;
  @Column({ type: "int" }) authorId!: number;
  @ManyToOne(() => RepAuthor, (a) => a.books) @JoinColumn({ name: "authorId" }) author!: RepAuthor;
}

export const replicaEntities = [RepAuthor, RepBook, ...QpTypeOrmRuleStore.entities, QpTokenRecord];

export const AUTHORS = "authors";
export const catalogue = () => new QpEntityCatalogue().expose(RepAuthor, AUTHORS).expose(RepBook, "books");

export const genres = ["poetry", "prose"] as const;

/** An author as the tests write it: every field derived from the id. */
export const authorRow = (id: number) => ({ id, name: `Author ${id}`, genre: genres[id % 2]!, code: `CODE-${id}` });

/** 5 authors with 1 to 3 books each. */
export function seedRows() {
  const authors = [1, 2, 3, 4, 5].map(authorRow);
  const books = authors.flatMap((a) => Array.from({ length: 1 + (a.id % 3) }, (_, i) => ({ id: a.id * 10 + i, title: `Book ${a.id}.${i}`, authorId: a.id })));
  return { authors, books };
}
