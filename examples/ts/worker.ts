// The example workflow's worker in TypeScript: the same activities and
// compensations as the Go worker (examples/worker, examples/fulfilment), run
// by @weft-dev/client's worker runtime. Run it with Node 22 or newer:
//
//   make ts-worker          # builds client/ts, then runs this file
//
// The address is $WEFT_URL (default http://127.0.0.1:7400), the bearer token
// $WEFT_TOKEN, the queue $WEFT_QUEUE (default "default"). On SIGINT or SIGTERM
// it stops polling and lets in-flight tasks finish and report.
import { createWeftClient } from "@weft-dev/client";
import { ErrorClass, VerifyState, Worker, fail, type ActivityContext } from "@weft-dev/client/worker";

/** What reserve-inventory reserves and release-inventory releases. */
interface Item {
  sku: string;
  quantity: number;
}

/** What charge-card charges and refund-card refunds. */
interface Payment {
  amount_cents: number;
  currency: string;
}

/** ship-order's input and output. */
interface Shipment {
  carrier: string;
  tracking?: string;
}

const weft = createWeftClient({ baseUrl: process.env.WEFT_URL || "http://127.0.0.1:7400", token: process.env.WEFT_TOKEN });
const worker = new Worker(weft, {
  queue: process.env.WEFT_QUEUE || "default",
  logger: (level, msg, fields) => console.error(JSON.stringify({ level, msg, ...fields })),
});

// Every external call would pass ctx.info.idempotencyKey, which is stable
// across retries, so a retried attempt cannot act twice.
const shortKey = (ctx: ActivityContext) => ctx.info.idempotencyKey.slice(0, 12);

worker
  .activity<Item, { reservation_id: string }>("reserve-inventory", (item, ctx) => {
    if (!(item.quantity > 0)) throw fail(ErrorClass.VALIDATION, "bad_quantity", "quantity must be positive");
    console.error(JSON.stringify({ msg: "reserved", run_id: ctx.info.runId, sku: item.sku }));
    return { reservation_id: `rsv-${shortKey(ctx)}` };
  })
  .activity<Payment, { charge_id: string }>(
    "charge-card",
    (payment, ctx) => {
      if (!ctx.info.upstreamOutputs["reserve"]) throw fail(ErrorClass.VALIDATION, "no_reservation", "charge needs the reservation");
      return { charge_id: `ch-${shortKey(ctx)}` };
    },
    {
      idempotencyKey: (p) => `charge-${p.amount_cents}-${p.currency}`,
      // A real verify asks the payment provider whether key was charged.
      verify: () => ({ state: VerifyState.INDETERMINATE, diagnostic: "example: no provider to ask" }),
    },
  )
  .activity<Shipment, Shipment>("ship-order", (shipment, ctx) => ({ ...shipment, tracking: `trk-${shortKey(ctx)}` }))
  .compensation<Item>("release-inventory", (item, ctx) => {
    console.error(JSON.stringify({ msg: "released", run_id: ctx.info.runId, sku: item.sku }));
  })
  .compensation<Payment>("refund-card", (payment, ctx) => {
    console.error(JSON.stringify({ msg: "refunded", run_id: ctx.info.runId, cents: payment.amount_cents }));
  });

await worker.run();
