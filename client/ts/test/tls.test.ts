// The Node client over TLS: a weftd serving a certificate a test CA signed
// is reached over gRPC and the Connect protocol (HTTP/2) when the client is
// given the CA, and refused when it is not.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeWeftClient } from "../src/node.js";
import { startWeftd } from "./support/weftd.js";

/** makeCerts writes a CA and a certificate for 127.0.0.1 it signed, with openssl. */
function makeCerts(): { dir: string; ca: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "weft-tls-"));
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  ssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=weft-test-ca", "-days", "1");
  ssl("req", ...ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=localhost");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  ssl("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tls.crt",
    "-days", "1", "-extfile", "san.ext");
  return { dir, ca: readFileSync(join(dir, "ca.crt")) };
}

const certs = makeCerts();
const weftd = await startWeftd(["--tls-cert", join(certs.dir, "tls.crt"), "--tls-key", join(certs.dir, "tls.key")]);
const baseUrl = weftd.url.replace("http://", "https://");
after(async () => {
  assert.equal(await weftd.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

for (const protocol of ["grpc", "connect"] as const) {
  test(`the Node client reaches a TLS weftd over ${protocol} with a custom CA`, async () => {
    const client = createNodeWeftClient({ baseUrl, protocol, tls: { ca: certs.ca } });
    const page = await client.runs.listRuns({});
    assert.deepEqual(page.runs, []);
  });
}

test("the Node client without the CA refuses weftd's certificate", async () => {
  const client = createNodeWeftClient({ baseUrl, protocol: "grpc", defaultTimeoutMs: 10000 });
  await assert.rejects(client.runs.listRuns({}));
});
