// A TCP proxy on 127.0.0.1 in front of a database server, for tests whose database must go down
// without stopping the shared server: cut() drops every open connection and every new one until
// restore(); refuseNext(n) drops the open ones and the next n new ones only.
import { type Server, type Socket, createConnection, createServer } from "node:net";

export interface TcpProxy {
  readonly port: number;
  /** The database is down: open connections are reset, new ones closed at once. */
  cut(): void;
  restore(): void;
  /** Resets the open connections and closes the next `count` new ones, then passes again. */
  refuseNext(count: number): void;
  /** New connections closed so far (while cut or refusing). */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let toRefuse = 0;
  let refused = 0;
  const dropAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  const server: Server = createServer((client) => {
    if (down || toRefuse > 0) {
      if (toRefuse > 0) toRefuse--;
      refused++;
      client.destroy();
      return;
    }
    const upstream = createConnection({ host, port });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("error", () => undefined); // a reset connection is the point, not a test failure
      socket.on("close", () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP port");
  return {
    port: address.port,
    cut: () => {
      down = true;
      dropAll();
    },
    restore: () => {
      down = false;
    },
    refuseNext: (count) => {
      toRefuse = count;
      dropAll();
    },
    get refused() {
      return refused;
    },
    close: () => {
      dropAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
