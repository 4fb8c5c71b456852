package sqlstore

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// pipelineMessages are the messages of one pipeline of statements with the
// given parameters, as pgconn's Pipeline sends them (a Describe for each,
// and the longest name of pipelineOnce's statements).
func pipelineMessages(params [][][]byte) []pgproto3.FrontendMessage {
	var msgs []pgproto3.FrontendMessage
	for _, p := range params {
		msgs = append(msgs,
			&pgproto3.Bind{PreparedStatement: "weft_trip_rollback", ParameterFormatCodes: binaryFormat, Parameters: p, ResultFormatCodes: binaryFormat},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{})
	}
	return append(msgs, &pgproto3.Sync{})
}

// randomParams draws up to five statements' parameters, sized from a few
// bytes (a pipeline under 1 KiB, whose buffer the Frontend keeps) to past
// maxRoomBytes.
func randomParams(rng *rand.Rand) [][][]byte {
	params := make([][][]byte, 1+rng.IntN(5))
	for i := range params {
		for range rng.IntN(4) {
			n := rng.IntN(200)
			switch rng.IntN(10) {
			case 0:
				n = rng.IntN(64 << 10)
			case 1:
				n = maxRoomBytes / 2
			}
			params[i] = append(params[i], bytes.Repeat([]byte{byte(rng.IntN(256))}, n))
		}
	}
	return params
}

// A Frontend given room before each pipeline writes exactly the bytes one
// without writes, round after round on the same connection, whatever the
// Frontend has pending when the room is made (normally nothing) and whether
// it kept the room as its buffer after the last flush (at most 1 KiB) or
// not.
func TestSendRoom_FrontendWritesTheSameBytesAsWithout(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 8))
	var plainOut, roomOut bytes.Buffer
	plain := pgproto3.NewFrontend(bytes.NewReader(nil), &plainOut)
	roomy := pgproto3.NewFrontend(bytes.NewReader(nil), &roomOut)
	var room sendRoom
	for round := range 300 {
		plainOut.Reset()
		roomOut.Reset()
		msgs := pipelineMessages(randomParams(rng))
		pending := rng.IntN(4) == 0
		if pending {
			for _, f := range []*pgproto3.Frontend{plain, roomy} {
				f.Send(&pgproto3.Flush{})
			}
		}
		need := 0
		for _, m := range msgs {
			enc, err := m.Encode(nil)
			require.NoError(t, err)
			need += len(enc)
		}
		room.reserve(roomy, need-rng.IntN(2)*need/2) // sometimes too little: the Frontend grows it
		for _, m := range msgs {
			plain.Send(m)
			roomy.Send(m)
		}
		require.NoError(t, plain.Flush())
		require.NoError(t, roomy.Flush())
		require.Equal(t, plainOut.Bytes(), roomOut.Bytes(), "round %d (pending %v)", round, pending)
		require.LessOrEqual(t, cap(room.buf), maxRoomBytes, "room past the bound is not kept")
	}
}

// With room made for its messages, a pipeline's encoding allocates no more
// than the 1 KiB buffer the Frontend takes after flushing it; without, the
// Frontend grows its buffer by doubling. (Not parallel: it counts the
// process's allocations.)
func TestSendRoom_PipelineEncodesWithoutGrowingTheBuffer(t *testing.T) {
	params := [][][]byte{{make([]byte, 6000), make([]byte, 9000)}, {make([]byte, 3000)}, nil}
	msgs := pipelineMessages(params)
	need := 0
	for _, m := range msgs {
		enc, _ := m.Encode(nil)
		need += len(enc)
	}
	f := pgproto3.NewFrontend(bytes.NewReader(nil), io.Discard)
	var room sendRoom
	send := func(withRoom bool) func() {
		return func() {
			if withRoom {
				room.reserve(f, need)
			}
			for _, m := range msgs {
				f.Send(m)
			}
			if err := f.Flush(); err != nil {
				panic(err)
			}
		}
	}
	require.LessOrEqual(t, testing.AllocsPerRun(20, send(true)), 1.0)
	require.Greater(t, testing.AllocsPerRun(20, send(false)), 1.0, "the measure sees the growth it prevents")
}

// pipelineBytes bounds the bytes of what pipelineOnce sends for a group:
// every statement's Bind, Describe and Execute, and the Sync.
func TestPipelineBytes_BoundsThePipelinesMessages(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	sc := &tripScratch{seen: map[uint64]int{}}
	for round := range 300 {
		g := randomGroup(rng, round)
		sc.encode(g.oneTripWrites(sc))
		params := [][][]byte{nil, sc.enc[encCondKeys : encCondVersions+1], sc.enc[encDeletes : encDeletes+1],
			sc.enc[encPutKeys : encPutValues+1], nil}
		sent := 0
		for _, m := range pipelineMessages(params) {
			enc, err := m.Encode(nil)
			require.NoError(t, err)
			sent += len(enc)
		}
		require.LessOrEqual(t, sent, pipelineBytes(sc), "round %d", round)
	}
}
