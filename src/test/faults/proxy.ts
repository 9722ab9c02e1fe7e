// A TCP proxy between the gateway and PostgreSQL, for the connection-fault test (issue 17):
// `cut()` closes the listening socket (new connections are refused, as by a stopped server)
// and destroys every open socket pair (the gateway's pooled and checked-out connections
// drop mid-statement); `restore()` listens on the same port again and forwards as before.
import net from 'node:net';

export class TcpProxy {
  /** Connections forwarded, and open socket pairs destroyed by cuts. */
  readonly stats = { forwarded: 0, destroyed: 0, cuts: 0 };
  private readonly open = new Set<net.Socket>();
  private readonly server: net.Server;
  private listening = false;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    this.server = net.createServer((client) => this.forward(client));
    this.server.on('error', () => {});
  }

  /** A proxy on `port` (127.0.0.1) forwarding to `target`. */
  static async start(port: number, target: { host: string; port: number }): Promise<TcpProxy> {
    const p = new TcpProxy(port, target);
    await p.restore();
    return p;
  }

  private forward(client: net.Socket): void {
    const upstream = net.connect({ host: this.target.host, port: this.target.port });
    this.stats.forwarded++;
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.open.add(client);
    this.open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.open.delete(client);
      this.open.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Refuse new connections and drop every open one. */
  async cut(): Promise<void> {
    this.stats.cuts++;
    const closed = this.listening ? new Promise<void>((r) => this.server.close(() => r())) : Promise.resolve();
    this.listening = false;
    for (const s of this.open) {
      s.destroy();
      this.stats.destroyed++;
    }
    this.open.clear();
    await closed;
  }

  /** Accept and forward again, on the same port. */
  async restore(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      const fail = (e: Error) => reject(e);
      this.server.once('error', fail);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', fail);
        resolve();
      });
    });
    this.listening = true;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
