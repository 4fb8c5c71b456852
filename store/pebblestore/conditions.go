package pebblestore

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// conditionReader reads the keys that one group's conditions name. It opens
// one Pebble iterator on first use and seeks it once per key, with the
// tables' bloom filters consulted at every level, the last one included
// (Pebble's own Get skips the last level's filters, so that every read of an
// absent key there loads an index and a data block). Most condition keys are
// absent — idempotency keys, request keys, new runs' checkpoints — and
// those the filters answer without reading the table.
//
// The iterator is a snapshot taken when it opens. The leader opens it after
// the previous group's apply has returned, and only the leader writes, so it
// sees every batch committed before the group; the group's own writes are in
// the overlay.
type conditionReader struct {
	db  *pebble.DB
	it  *pebble.Iterator
	raw []byte // the record key being read, reused
}

// lookup reports a key's presence and version as stored.
func (r *conditionReader) lookup(key []byte) (bool, uint64, error) {
	if r.it == nil {
		it, err := r.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return false, 0, translate(err)
		}
		r.it = it
	}
	r.raw = append(append(r.raw[:0], recordPrefix), key...)
	if !r.it.SeekPrefixGE(r.raw) || !bytes.Equal(r.it.Key(), r.raw) {
		return false, 0, translate(r.it.Error())
	}
	raw, err := r.it.ValueAndErr()
	if err != nil {
		return false, 0, translate(err)
	}
	version, err := decodeVersion(key, raw)
	return true, version, err
}

// close releases the iterator, if one was opened.
func (r *conditionReader) close() error {
	if r.it == nil {
		return nil
	}
	it := r.it
	r.it = nil
	return translate(it.Close())
}
