// Bearer-token authentication for every call.
import type { Interceptor } from "@connectrpc/connect";

/** A bearer token, or a function that answers the current one (it may refresh it). */
export type TokenSource = string | (() => string | Promise<string>);

/** Resolves a token source to the token to send now ("" sends none). */
export async function resolveToken(token: TokenSource | undefined): Promise<string> {
  if (token === undefined) return "";
  return typeof token === "string" ? token : await token();
}

/**
 * bearerAuth answers an interceptor that sends `Authorization: Bearer <token>`
 * on every call that does not already carry an Authorization header. Use it in
 * the interceptors of a transport you build yourself (e.g. connect-node's).
 */
export function bearerAuth(token: TokenSource): Interceptor {
  return (next) => async (req) => {
    const t = await resolveToken(token);
    if (t && !req.header.has("authorization")) req.header.set("authorization", `Bearer ${t}`);
    return await next(req);
  };
}
