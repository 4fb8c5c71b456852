// Runs under Node's test runner against a real weftd (started here, or WEFT_URL): an invalid
// request answers invalid_argument with field violations and a typed Fault,
// through the generated TypeScript client.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { RunService } from "../src/gen/weft/v1/run_pb.js";
import { FaultCode, FaultSchema } from "../src/gen/weft/v1/fault_pb.js";
import { ViolationsSchema } from "../src/gen/buf/validate/validate_pb.js";
import { startWeftd } from "./support/weftd.js";

// A weftd of its own (embedded, temp dir, free port), unless WEFT_URL names one.
const own = process.env.WEFT_URL ? undefined : await startWeftd();
const baseUrl = process.env.WEFT_URL ?? own!.url;
after(async () => {
  if (own) assert.equal(await own.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

const transports = {
  connect: () => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  grpc: () => createGrpcTransport({ baseUrl, idleConnectionTimeoutMs: 200 }),
  "grpc-web": () => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
};

for (const [name, make] of Object.entries(transports)) {
  test(`GetRun with an empty run_id answers invalid_argument naming run_id (${name})`, async () => {
    const client = createClient(RunService, make());
    const err = await client.getRun({ runId: "" }).then(
      () => assert.fail("GetRun with an empty run_id succeeded"),
      (e: unknown) => ConnectError.from(e),
    );
    assert.equal(err.code, Code.InvalidArgument);
    const violations = err.findDetails(ViolationsSchema).flatMap((v) => v.violations);
    assert.ok(violations.length > 0, "no buf.validate.Violations detail");
    const fields = violations.map((v) => v.field?.elements.map((e) => e.fieldName).join("."));
    assert.deepEqual(fields, ["run_id"]);
    assert.equal(violations[0].ruleId, "string.min_len");
    const [fault] = err.findDetails(FaultSchema);
    assert.ok(fault, "no weft.v1.Fault detail");
    assert.equal(fault.code, FaultCode.INVALID_ARGUMENT);
    assert.match(fault.correlationId, /^[0-9a-f-]{36}$/);
  });
}
