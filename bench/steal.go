package bench

import (
	"os"
	"strconv"
	"strings"
)

// startSteal reads the host's CPU counters and answers a function that
// reports the share of CPU time stolen since (−1 when /proc/stat is unreadable).
func startSteal() func() float64 {
	total0, steal0, ok0 := readCPUStat()
	return func() float64 {
		total1, steal1, ok1 := readCPUStat()
		if !ok0 || !ok1 || total1 <= total0 {
			return -1
		}
		return float64(steal1-steal0) * 100 / float64(total1-total0)
	}
}

// readCPUStat answers the sum of /proc/stat's aggregate cpu counters and its
// steal counter.
func readCPUStat() (total, steal uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, false
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice]: the
	// guest times are already inside user and nice.
	for i, f := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 7 {
			steal = n
		}
	}
	return total, steal, true
}
