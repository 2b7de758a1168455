// LISTEN/NOTIFY for the relational rule store on PostgreSQL (the dialect's changeChannel): the
// listener is a connection of its own, opened with the settings of the DataSource's primary pool
// (never one of the pool's connections: a held pool client would make DataSource.destroy() wait
// for it forever). Its socket is unref'd, so it never keeps the process alive. lib/rules/ keeps it
// open, reconnects and pings it (sharedListener).
import type { DataSource } from "typeorm";
import type { ChangeChannel, ListeningConnection } from "../sql-dialect.js";

interface PgNotification {
  channel: string;
  payload?: string;
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: "notification", listener: (message: PgNotification) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  on(event: "end", listener: () => void): void;
  connection?: { stream?: { unref?(): void } };
}

interface PgPool {
  options: Record<string, unknown>;
  Client: new (options: Record<string, unknown>) => PgClient;
}

/** The application_name of listening connections when the DataSource sets none (to find them in pg_stat_activity). */
export const listenerApplicationName = "querylib rule listener";

export async function listenOnPostgres(dataSource: DataSource, channel: string, deliver: (payload: string) => void, lost: (error: Error) => void): Promise<ListeningConnection> {
  // The primary: a NOTIFY reaches listeners of the server it ran on only.
  const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
  if (!pool?.Client) throw new Error("the DataSource has no PostgreSQL connection pool");
  const client = new pool.Client({
    ...pool.options,
    application_name: (pool.options.application_name as string | undefined) ?? listenerApplicationName,
    // Notices a peer that vanished without closing the connection (the server's host is gone).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  let closing = false;
  let failure: Error | null = null;
  client.on("error", (error) => (failure = error));
  client.on("end", () => {
    if (!closing) lost(failure ?? new Error("the listening connection was closed"));
  });
  client.on("notification", (message) => {
    if (message.channel === channel && typeof message.payload === "string") deliver(message.payload);
  });
  try {
    await client.connect();
    client.connection?.stream?.unref?.();
    // The channel is a checked lower-case identifier (checkNotifyChannel): quoting keeps it as pg_notify($1) names it.
    await client.query(`LISTEN "${channel}"`);
  } catch (error) {
    closing = true;
    await client.end().catch(() => undefined);
    throw error;
  }
  return {
    close: async () => {
      closing = true;
      await client.end();
    },
    // LISTEN again is a no-op round trip, and pg_stat_activity keeps showing the connection's purpose.
    ping: async () => {
      await client.query(`LISTEN "${channel}"`);
    },
  };
}

export const postgresChangeChannel: ChangeChannel = {
  notify: (channel, payload) => ({ sql: "SELECT pg_notify($1, $2)", parameters: [channel, payload] }),
  listen: listenOnPostgres,
};
