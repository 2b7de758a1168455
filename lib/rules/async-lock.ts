// Runs async work one piece at a time, in call order. SQLite drivers share one connection, so
// two transactions opened on it at once would nest ("cannot start a transaction within a
// transaction"); work that opens transactions on such a DataSource goes through its lock.
import type { DataSource } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";

export class AsyncLock {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

const locks = new WeakMap<DataSource, AsyncLock>();

/** The lock of a single-connection DataSource (one per DataSource, shared by its users), or null for pooled drivers. */
export function connectionLock(dataSource: DataSource): AsyncLock | null {
  if (dialectOf(dataSource).pooled) return null;
  let lock = locks.get(dataSource);
  if (!lock) locks.set(dataSource, (lock = new AsyncLock()));
  return lock;
}
