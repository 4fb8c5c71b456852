package pebblestore_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
)

// rawSyncedSet is the baseline: one synced single-key Pebble write.
func rawSyncedSet(b *testing.B) func(int) error {
	db, err := pebble.Open(b.TempDir(), quiet())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	value := make([]byte, storetest.BenchValueBytes)
	return func(i int) error {
		return db.Set([]byte(strconv.Itoa(i%1000)), value, pebble.Sync)
	}
}

func quiet() *pebble.Options { return &pebble.Options{Logger: noLog{}} }

type noLog struct{}

func (noLog) Infof(string, ...any)  {}
func (noLog) Errorf(string, ...any) {}
func (noLog) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(t testing.TB) store.Store { return open(t, t.TempDir()) }, rawSyncedSet)
}

func BenchmarkRawSyncedSet(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), quiet())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, storetest.BenchValueBytes)
	for b.Loop() {
		if err := db.Set([]byte("k"), value, pebble.Sync); err != nil {
			b.Fatal(err)
		}
	}
}
