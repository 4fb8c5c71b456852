// EventFeed's rules (docs/semantics.md#console-event-feed), as node:test cases.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { EventSchema } from "../../client/ts/src/gen/weft/v1/event_pb";
import { EventFeed } from "../src/feed";

const ev = (seq: number) => create(EventSchema, { runSeq: BigInt(seq), eventType: "StepStarted" });
const seqs = (f: EventFeed) => f.events.map((e) => Number(e.runSeq));

test("contiguous events are applied in run_seq order and advance the watermark", () => {
  const f = new EventFeed();
  for (const s of [1, 2, 3]) assert.equal(f.offer(ev(s)), "applied");
  assert.deepEqual(seqs(f), [1, 2, 3]);
  assert.equal(f.watermark, 3n);
  assert.equal(f.stale, false);
});

test("an event at or below the watermark is old and changes nothing", () => {
  const f = new EventFeed();
  f.offer(ev(1));
  f.offer(ev(2));
  assert.equal(f.offer(ev(2)), "old");
  assert.equal(f.offer(ev(1)), "old");
  assert.deepEqual(seqs(f), [1, 2]);
});

test("a gap marks the feed STALE and nothing more is applied until a resync", () => {
  const f = new EventFeed();
  f.offer(ev(1));
  assert.equal(f.offer(ev(3)), "gap");
  assert.equal(f.stale, true);
  assert.equal(f.staleAt, 1n);
  assert.equal(f.gapAt, 3n);
  assert.equal(f.offer(ev(4)), "gap");
  assert.deepEqual(seqs(f), [1]);
});

test("a resync that does not advance the watermark past the gap leaves the feed STALE", () => {
  const f = new EventFeed();
  f.offer(ev(1));
  f.offer(ev(5));
  assert.equal(f.resynced([]), false);
  assert.equal(f.stale, true);
  assert.equal(f.resynced([ev(2)]), false, "advanced, but not to the gap");
  assert.equal(f.stale, true);
  assert.equal(f.watermark, 2n);
  assert.equal(f.resyncs, 2);
});

test("a resync that reaches the gap ends STALE, applying what it answered in run_seq order, gaps and all", () => {
  const f = new EventFeed();
  f.offer(ev(1));
  f.offer(ev(4));
  assert.equal(f.resynced([ev(6), ev(4), ev(1)]), true);
  assert.equal(f.stale, false);
  assert.deepEqual(seqs(f), [1, 4, 6]);
  assert.equal(f.offer(ev(7)), "applied");
});

test("any interleaving of offers keeps the log strictly increasing and never past a gap while STALE", () => {
  // A small property test: random event streams with duplicates, reorders and gaps.
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 500; round++) {
    const f = new EventFeed();
    for (let i = 0; i < 40; i++) {
      const seq = Number(f.watermark) + rand(4) - 1;
      if (seq < 1) continue;
      const before = f.watermark;
      const was = f.stale;
      const r = f.offer(ev(seq));
      if (was) assert.notEqual(r, "applied");
      if (r === "applied") assert.equal(f.watermark, before + 1n);
      if (rand(5) === 0 && f.stale) f.resynced([ev(Number(f.gapAt))]);
    }
    const s = seqs(f);
    for (let i = 1; i < s.length; i++) assert.ok(s[i] > s[i - 1]);
  }
});
