package dispatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueueHints_StaleRaiseIsIgnoredAndLowerTakesTheMinimum(t *testing.T) {
	h := NewQueueHints()
	p := []byte("op:t:q:")
	from, gen := h.Start(p, p)
	require.Equal(t, p, from)
	h.Raise(p, []byte("op:t:q:5"), gen)
	from, gen = h.Start(p, p)
	require.Equal(t, "op:t:q:5", string(from))

	h.Lower(p, []byte("op:t:q:3")) // an insert while a scan from gen ran
	h.Raise(p, []byte("op:t:q:9"), gen)
	from, _ = h.Start(p, p)
	require.Equal(t, "op:t:q:3", string(from), "a raise by a scan that began before an insert must not pass the insert")

	h.Lower(p, []byte("op:t:q:4"))
	from, _ = h.Start(p, p)
	require.Equal(t, "op:t:q:3", string(from), "lower never raises")

	var none *QueueHints // cas-required: no hints
	from, _ = none.Start(p, []byte("op:t:q:"))
	require.Equal(t, "op:t:q:", string(from))
}
