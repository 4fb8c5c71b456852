package runcodec

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatDeadline is a deadline index entry's value (tmd:{bucket}:{run}),
// version 1: the format byte, then field 1, the earliest attempt deadline
// among the claims of the run the entry indexes, as a time.
const FormatDeadline byte = 0x08

const deadlineEarliest = 1

// AppendDeadline appends the stored form of a deadline index entry whose
// earliest deadline is earliest to b.
func AppendDeadline(b []byte, earliest time.Time) []byte {
	return appendTime(append(b, FormatDeadline), deadlineEarliest, earliest)
}

// DecodeDeadline answers the earliest deadline of a stored deadline index
// entry. Unknown fields are skipped; a format byte other than
// FormatDeadline is refused.
func DecodeDeadline(b []byte) (time.Time, error) {
	if len(b) == 0 || b[0] != FormatDeadline {
		return time.Time{}, fmt.Errorf("deadline index entry: %w", ErrUnknownFormat)
	}
	var earliest time.Time
	err := eachField(b[1:], func(n protowire.Number, f field) error {
		var err error
		if n == deadlineEarliest {
			earliest, err = f.time()
		}
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("deadline index entry: %w", err)
	}
	return earliest, nil
}
