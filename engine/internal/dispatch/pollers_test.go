package dispatch

import (
	"testing"
	"time"
)

// TestPollers_TokensAreInFlightUntilReportedOrSettledAndQuietPollersAreForgotten:
// a poller's handed tokens count until a report or the engine's check ends
// them; a poller is kept while it polls, holds a task or polled within the
// TTL, and forgotten after.
func TestPollers_TokensAreInFlightUntilReportedOrSettledAndQuietPollersAreForgotten(t *testing.T) {
	var p Pollers
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	key := PollerKey{Tenant: "t", Queue: "q", Worker: "w"}
	end := p.Begin(key, []string{"a:y", "a:x", "a:x"}, t0)
	if p.Forget(key, t0.Add(time.Hour)) {
		t.Fatal("a poller with an open poll was forgotten")
	}
	p.Handed(key, []string{"t1", "t2", "t3"})
	end(t0.Add(time.Second))
	snap := p.Snapshot()
	if len(snap) != 1 || snap[0].Polling != 0 || !snap[0].LastPoll.Equal(t0.Add(time.Second)) ||
		len(snap[0].Tokens) != 3 || len(snap[0].Names) != 2 || snap[0].Names[0] != "a:x" {
		t.Fatalf("snapshot after one poll: %+v", snap)
	}
	p.Reported("t1")
	p.Reported("unknown")
	p.Settled(key, []string{"t2"}, t0.Add(2*time.Second))
	snap = p.Snapshot()
	if len(snap[0].Tokens) != 1 || snap[0].Tokens[0] != "t3" || !snap[0].Published.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("after a report and a settle: %+v", snap[0])
	}
	if p.Forget(key, t0.Add(time.Hour)) {
		t.Fatal("a poller holding a task was forgotten")
	}
	p.Reported("t3")
	if p.Forget(key, t0) {
		t.Fatal("a poller that polled after the cut-off was forgotten")
	}
	if !p.Forget(key, t0.Add(time.Hour)) || len(p.Snapshot()) != 0 {
		t.Fatal("a quiet poller holding nothing was kept")
	}
}

// TestPollers_NamesAreBounded: a poll naming a thousand activities keeps
// at most maxPollerNames of them.
func TestPollers_NamesAreBounded(t *testing.T) {
	var p Pollers
	names := make([]string, 1000)
	for i := range names {
		names[i] = "a:" + time.Duration(i).String()
	}
	p.Begin(PollerKey{Worker: "w"}, names, time.Now())
	if got := len(p.Snapshot()[0].Names); got != maxPollerNames {
		t.Fatalf("kept %d names, want %d", got, maxPollerNames)
	}
}

// TestPollers_DueAnswersThePollersNeverPublishedOrPublishedBeforeTheCutOff:
// a poller's record is due when it was never written or written at or
// before the cut-off.
func TestPollers_DueAnswersThePollersNeverPublishedOrPublishedBeforeTheCutOff(t *testing.T) {
	var p Pollers
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	fresh, stale, recent := PollerKey{Worker: "fresh"}, PollerKey{Worker: "stale"}, PollerKey{Worker: "recent"}
	for _, k := range []PollerKey{fresh, stale, recent} {
		p.Begin(k, nil, t0)
	}
	p.Settled(stale, nil, t0)
	p.Settled(recent, nil, t0.Add(time.Second))
	var got []string
	for _, d := range p.Due(t0) {
		got = append(got, d.Worker)
	}
	if len(got) != 2 || got[0] != "fresh" || got[1] != "stale" {
		t.Fatalf("due: %v, want [fresh stale]", got)
	}
}
