package dispatch

import "sync"

// Claiming are the tasks this process's polls are claiming. Every ready
// entry wakes every poll of its queue, and those that find it while another
// poll of the process claims it skip it: their claim, made from the same task
// version, could only fail, after queueing behind the first on the run's
// lock. If the first claim fails to commit, the entry stays ready for a later
// poll.
type Claiming struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// Begin marks taskID as being claimed; false when it already is.
func (c *Claiming) Begin(taskID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.ids[taskID]; busy {
		return false
	}
	if c.ids == nil {
		c.ids = map[string]struct{}{}
	}
	c.ids[taskID] = struct{}{}
	return true
}

// End clears the mark Begin set.
func (c *Claiming) End(taskID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ids, taskID)
}
