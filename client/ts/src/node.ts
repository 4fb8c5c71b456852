// @weft-dev/client/node: transports over Node's HTTP/2 (connect-node), for
// gRPC or the Connect protocol with many concurrent long polls on one
// connection. Node only.
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import { createWeftClient, type WeftClient, type WeftClientOptions } from "./client.js";

/** Options of {@link createNodeWeftClient}. */
export interface NodeWeftClientOptions extends Omit<WeftClientOptions, "transport" | "fetch" | "json"> {
  /** weftd's address, e.g. "http://127.0.0.1:7400". */
  baseUrl: string;
  /** "grpc" (default) or "connect", both over HTTP/2. */
  protocol?: "grpc" | "connect";
  /**
   * TLS for an https:// weftd: the CA that signed its certificate (PEM), and
   * a client certificate and key (PEM) for mutual TLS. Unset: Node's roots,
   * no client certificate.
   */
  tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
}

/**
 * createNodeWeftClient answers a client over HTTP/2 (connect-node): gRPC by
 * default, or the Connect protocol. The token is sent on every call.
 */
export function createNodeWeftClient(options: NodeWeftClientOptions): WeftClient {
  const common = {
    baseUrl: options.baseUrl,
    interceptors: options.interceptors,
    defaultTimeoutMs: options.defaultTimeoutMs,
    nodeOptions: options.tls ? { ca: options.tls.ca, cert: options.tls.cert, key: options.tls.key } : undefined,
  };
  const transport: Transport =
    options.protocol === "connect"
      ? createConnectTransport({ ...common, httpVersion: "2", useBinaryFormat: true })
      : createGrpcTransport(common);
  return createWeftClient({ transport, token: options.token });
}

export * from "./index.js";
