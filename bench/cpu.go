package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// serviceCommands are the processes whose CPU time a measurement reports as
// the services': PostgreSQL's backends and Redis.
var serviceCommands = []string{"postgres", "redis-server"}

// cpuSeconds answers the process's user plus system CPU time.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	_, secs, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	return secs, nil
}

// commandsCPUSeconds answers the CPU time of every live process whose
// command name is one of names, summed. A process that ends between two
// readings takes its time with it, so the difference of two readings can
// undercount; one that cannot be read is skipped.
func commandsCPUSeconds(names []string) float64 {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	total := 0.0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		comm, secs, err := parseStat(b)
		if err == nil && slices.Contains(names, comm) {
			total += secs
		}
	}
	return total
}

// parseStat answers the command name and user plus system CPU seconds of a
// /proc/<pid>/stat line.
func parseStat(b []byte) (string, float64, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, errors.New("/proc stat has no command name")
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 13 {
		return "", 0, errors.New("/proc stat is too short")
	}
	// After ')', fields[0] is the state (field 3): utime is field 14, stime 15.
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return "", 0, err
	}
	return string(b[open+1 : end]), float64(utime+stime) / clockTicks, nil
}
