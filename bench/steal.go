package bench

import (
	"os"
	"strconv"
	"strings"
)

// startSteal reads the host's CPU counters and answers a function that
// reports the shares of CPU time stolen and busy since, in percent (−1 when
// /proc/stat is unreadable).
func startSteal() func() (steal, busy float64) {
	c0, ok0 := readCPUStat()
	return func() (float64, float64) {
		c1, ok1 := readCPUStat()
		if !ok0 || !ok1 || c1.total <= c0.total {
			return -1, -1
		}
		total := float64(c1.total - c0.total)
		return float64(c1.steal-c0.steal) * 100 / total, 100 - float64(c1.idle-c0.idle)*100/total
	}
}

// cpuStat is /proc/stat's aggregate cpu line, in ticks.
type cpuStat struct{ total, idle, steal uint64 }

// readCPUStat answers the sum of /proc/stat's aggregate cpu counters, its
// idle (with iowait) and steal counters.
func readCPUStat() (cpuStat, bool) {
	var st cpuStat
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return st, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return st, false
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice]: the
	// guest times are already inside user and nice.
	for i, f := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return st, false
		}
		st.total += n
		switch i {
		case 3, 4: // idle, iowait
			st.idle += n
		case 7:
			st.steal = n
		}
	}
	return st, true
}
