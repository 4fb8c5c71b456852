package cache

import (
	"sync"

	"github.com/weft-dev/weft/engine/internal/record"
)

// planID names a plan record: its tenant and plan SHA-256.
type planID struct{ tenant, sha256 string }

// planCache holds plan records by planID, bounded as dispatch.Recent is:
// two generations of at most size entries, the older dropped whole when
// the current one fills, an entry found in the older moved to the current.
// Its keys are the pair itself, so that a lookup builds no string.
type planCache struct {
	mu       sync.Mutex
	size     int
	cur, old map[planID]*record.Plan
}

func newPlanCache(size int) *planCache {
	return &planCache{size: size, cur: make(map[planID]*record.Plan, size)}
}

// get answers the plan held for id.
func (c *planCache) get(id planID) (*record.Plan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.cur[id]; ok {
		return p, true
	}
	p, ok := c.old[id]
	if ok {
		delete(c.old, id)
		c.putLocked(id, p)
	}
	return p, ok
}

// put holds p for id.
func (c *planCache) put(id planID, p *record.Plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.old, id)
	c.putLocked(id, p)
}

func (c *planCache) putLocked(id planID, p *record.Plan) {
	if _, ok := c.cur[id]; !ok && len(c.cur) >= c.size {
		c.old, c.cur = c.cur, c.old
		if c.cur == nil {
			c.cur = make(map[planID]*record.Plan, c.size)
		}
		clear(c.cur)
	}
	c.cur[id] = p
}
