package store

import "bytes"

// Limits shared by every backend. They are part of the persisted format: see
// docs/storage.md.
const (
	// MaxKeyBytes is the longest key any backend accepts. It keeps keys well
	// inside PostgreSQL's B-tree entry limit (about 2.7 KB).
	MaxKeyBytes = 2048
	// DefaultMaxValueBytes is the default value limit of every backend.
	DefaultMaxValueBytes = 4 << 20
	// DefaultScanLimit is the page size of a scan with Limit 0.
	DefaultScanLimit = 1000
	// MaxScanLimit is the largest page a scan may ask for.
	MaxScanLimit = 10000
)

// ValidateKey rejects empty keys and keys longer than MaxKeyBytes.
func ValidateKey(key []byte) error {
	if len(key) == 0 {
		return invalidf("key must not be empty")
	}
	if len(key) > MaxKeyBytes {
		return invalidf("key is %d bytes, limit is %d", len(key), MaxKeyBytes)
	}
	return nil
}

// ValidateBatch checks a batch against the shared rules and the backend's
// capabilities: valid keys and kinds, no key twice among Ops or among
// Conditions, values within caps.MaxValueBytes, and no conditions unless
// caps.ConditionalBatch. Backends call it before touching storage, so an
// invalid batch never writes anything.
func ValidateBatch(b *Batch, caps Capabilities) error {
	if b == nil {
		return invalidf("batch must not be nil")
	}
	if len(b.Conditions) > 0 && !caps.ConditionalBatch {
		return &CapabilityError{Capability: CapabilityConditionalBatch, Backend: caps.Backend}
	}
	if err := validateConditions(b.Conditions); err != nil {
		return err
	}
	return validateOps(b.Ops, caps.MaxValueBytes)
}

func validateConditions(conds []Condition) error {
	var seen map[string]struct{} // only for a long batch: a short one compares its keys pairwise
	if len(conds) > pairwiseKeys {
		seen = make(map[string]struct{}, len(conds))
	}
	for i, c := range conds {
		if err := ValidateKey(c.Key); err != nil {
			return invalidf("condition %d: %v", i, err)
		}
		if c.Kind < CondAbsent || c.Kind > CondVersion {
			return invalidf("condition %d on key %q has invalid kind %d", i, c.Key, c.Kind)
		}
		if c.Kind == CondVersion && c.Version == 0 {
			return invalidf("condition %d on key %q: version must be > 0", i, c.Key)
		}
		if seenBefore(conds[:i], conditionKey, c.Key, seen) {
			return invalidf("key %q has more than one condition", c.Key)
		}
	}
	return nil
}

func validateOps(ops []Op, maxValue int) error {
	var seen map[string]struct{} // only for a long batch: a short one compares its keys pairwise
	if len(ops) > pairwiseKeys {
		seen = make(map[string]struct{}, len(ops))
	}
	for i, op := range ops {
		if err := ValidateKey(op.Key); err != nil {
			return invalidf("op %d: %v", i, err)
		}
		switch op.Kind {
		case OpPut:
			if len(op.Value) > maxValue {
				return &ValueTooLargeError{Key: bytes.Clone(op.Key), Size: len(op.Value), Limit: maxValue}
			}
		case OpDelete:
		default:
			return invalidf("op %d on key %q has invalid kind %d", i, op.Key, op.Kind)
		}
		if seenBefore(ops[:i], opKey, op.Key, seen) {
			return invalidf("key %q is written more than once in one batch", op.Key)
		}
	}
	return nil
}

// pairwiseKeys is the longest batch whose keys validateOps (and
// validateConditions, its conditions') compares
// pairwise rather than through a map: a few dozen comparisons cost less
// than the map's allocation and hashing.
const pairwiseKeys = 32

// seenBefore reports whether key is the key (keyOf) of one of earlier:
// through seen, which it then adds key to, when there is one, else by
// comparing.
func seenBefore[T any](earlier []T, keyOf func(*T) []byte, key []byte, seen map[string]struct{}) bool {
	if seen != nil {
		if _, dup := seen[string(key)]; dup {
			return true
		}
		seen[string(key)] = struct{}{}
		return false
	}
	for i := range earlier {
		if bytes.Equal(keyOf(&earlier[i]), key) {
			return true
		}
	}
	return false
}

func opKey(op *Op) []byte              { return op.Key }
func conditionKey(c *Condition) []byte { return c.Key }

// CheckConditions evaluates conds in order with lookup, which reports whether
// a key exists and at which version. It returns the first failure as a
// *ConditionFailedError, or lookup's error.
func CheckConditions(conds []Condition, lookup func(key []byte) (found bool, version uint64, err error)) error {
	for _, c := range conds {
		found, version, err := lookup(c.Key)
		if err != nil {
			return err
		}
		if !c.Holds(found, version) {
			return &ConditionFailedError{Condition: c, Key: bytes.Clone(c.Key), Found: found, Version: version}
		}
	}
	return nil
}

// Validate checks the scan parameters.
func (p *ScanParams) Validate() error {
	if p == nil {
		return invalidf("scan params must not be nil")
	}
	if p.Prefix != nil && (p.Start != nil || p.End != nil) {
		return invalidf("scan takes a prefix or a range, not both")
	}
	if p.Start != nil && p.End != nil && bytes.Compare(p.Start, p.End) > 0 {
		return invalidf("scan start %q is after end %q", p.Start, p.End)
	}
	if p.Limit < 0 || p.Limit > MaxScanLimit {
		return invalidf("scan limit must be between 0 and %d, got %d", MaxScanLimit, p.Limit)
	}
	return nil
}

// EffectiveLimit is Limit, or DefaultScanLimit when Limit is 0.
func (p *ScanParams) EffectiveLimit() int {
	if p.Limit == 0 {
		return DefaultScanLimit
	}
	return p.Limit
}

// Bounds returns the effective key range of the scan, after Prefix and After
// are applied: lower is inclusive (nil: unbounded), upper exclusive (nil:
// unbounded). empty reports a range that holds no key.
func (p *ScanParams) Bounds() (lower, upper []byte, empty bool) {
	lower, upper = p.Start, p.End
	if p.Prefix != nil {
		lower, upper = p.Prefix, PrefixEnd(p.Prefix)
	}
	if p.After != nil && bytes.Compare(p.After, lower) >= 0 {
		lower = append(bytes.Clone(p.After), 0)
	}
	if upper != nil && lower != nil && bytes.Compare(lower, upper) >= 0 {
		return lower, upper, true
	}
	return lower, upper, false
}

// PrefixEnd returns the smallest key greater than every key that begins with
// prefix, or nil when no such key exists (prefix is empty or all 0xFF).
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// InBounds reports whether key lies in [lower, upper) (nil bounds are open).
func InBounds(key, lower, upper []byte) bool {
	if lower != nil && bytes.Compare(key, lower) < 0 {
		return false
	}
	return upper == nil || bytes.Compare(key, upper) < 0
}
