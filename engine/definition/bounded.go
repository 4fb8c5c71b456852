package definition

// PutBounded holds v at key in m, a cache of definitions (or of what was made
// from them) bounded at max entries: when m is full and key is new, an entry
// — any — is dropped first. The caches of definitions bound themselves this
// way: PreparedCache, and the server's messages of definitions.
func PutBounded[K comparable, V any](m map[K]V, key K, v V, max int) {
	if _, held := m[key]; !held && len(m) >= max {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = v
}
