package pebblestore

import (
	"encoding/binary"
	"fmt"
	"log/slog"

	"github.com/weft-dev/weft/store"
)

// Prefixes of the raw Pebble keyspace.
const (
	recordPrefix = 'r'
	metaPrefix   = 'm'
)

// layoutVersion is the version of this file's on-disk layout, and the first
// byte of every record value.
const layoutVersion = 0x01

var (
	metaFormat = []byte{metaPrefix, 'f', 'o', 'r', 'm', 'a', 't'}
	metaSeq    = []byte{metaPrefix, 's', 'e', 'q'}
)

// recordKey maps a store key (or a scan bound) into the record keyspace; a
// nil bound maps to the start of the keyspace.
func recordKey(key []byte) []byte {
	return append([]byte{recordPrefix}, key...)
}

// recordUpper maps an exclusive scan bound; nil (unbounded) maps to the end
// of the record keyspace.
func recordUpper(upper []byte) []byte {
	if upper == nil {
		return []byte{recordPrefix + 1}
	}
	return recordKey(upper)
}

// recordKeyLen is the length of key's record key.
func recordKeyLen(key []byte) int { return 1 + len(key) }

// putRecordKey writes key's record key into dst, of recordKeyLen(key) bytes.
func putRecordKey(dst, key []byte) {
	dst[0] = recordPrefix
	copy(dst[1:], key)
}

// recordValueLen is the length of a record value holding value.
func recordValueLen(value []byte) int { return 9 + len(value) }

// putRecordValue writes the record value of version and value into dst, of
// recordValueLen(value) bytes.
func putRecordValue(dst []byte, version uint64, value []byte) {
	dst[0] = layoutVersion
	binary.BigEndian.PutUint64(dst[1:9], version)
	copy(dst[9:], value)
}

// decodeItem parses a record value, copying it.
func decodeItem(key, raw []byte) (store.Item, error) {
	if err := checkLayout(key, raw); err != nil {
		return store.Item{}, err
	}
	value := make([]byte, len(raw)-9)
	copy(value, raw[9:])
	return store.Item{Key: key, Value: value, Version: binary.BigEndian.Uint64(raw[1:9])}, nil
}

// decodeVersion parses the version of a record value, copying nothing.
func decodeVersion(key, raw []byte) (uint64, error) {
	if err := checkLayout(key, raw); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(raw[1:9]), nil
}

func checkLayout(key, raw []byte) error {
	if len(raw) < 9 || raw[0] != layoutVersion {
		return fmt.Errorf("pebblestore: record %q has an unknown layout (%d bytes)", key, len(raw))
	}
	return nil
}

// pebbleLogger routes Pebble's logging to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Info(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic("pebble: " + msg)
}
