/** Listening and graceful shutdown (stop accepting, finish in-flight requests, close the store). */
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../core';
import { createApp, type RouteTable } from './app';

export interface RunningServer {
  url: string;
  server: http.Server;
  /** The API's routes (not the pages'): what /openapi.json must describe. */
  routes: RouteTable;
  /** Stops accepting, waits up to the grace period for in-flight requests. Does not close the store. */
  close(): Promise<void>;
}

export async function startServer(core: Core, host = core.config.host, port = core.config.port): Promise<RunningServer> {
  const server = http.createServer();
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;
  // Known only now (port 0): links and issuers use it. No request runs before the handler is attached:
  // nothing awaits between here and server.on('request').
  core.listening(url);
  const { app, web, metrics, routes } = createApp(core);
  // Once stopping, every answer closes its connection: a client that keeps its connections busy
  // (keep-alive under load) moves to another instance at its next request, so the server drains
  // in the time its requests take, not in the grace period, which then cuts what is in flight.
  // Answers under way at the signal (a request whose body was still coming) close theirs too.
  let draining = false;
  const underWay = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    if (draining) return void res.setHeader('Connection', 'close');
    underWay.add(res);
    res.once('close', () => underWay.delete(res));
  });
  server.on('request', app.callback());
  // A running server records its public URL for the shell and delivers the queue (mail, webhooks).
  await core.serving();
  let closing: Promise<void> | null = null;
  return {
    url,
    server,
    routes,
    close() {
      closing ??= new Promise<void>((resolve) => {
        draining = true;
        for (const res of underWay) if (!res.headersSent) res.setHeader('Connection', 'close');
        underWay.clear();
        const grace = setTimeout(() => server.closeAllConnections(), core.config.shutdownGrace);
        grace.unref();
        server.close(() => {
          clearTimeout(grace);
          web.loop.stop();
          metrics.stop();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
