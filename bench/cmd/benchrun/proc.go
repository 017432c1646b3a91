package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Memory and CPU of a process tree, read from /proc (Linux).

// procStat is what /proc/PID/stat and /proc/PID/status say about one
// process.
type procStat struct {
	pid, ppid int
	comm      string
	cpuTicks  uint64 // utime + stime
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

func readStat(pid int) (procStat, bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid ... ; comm may hold spaces and parentheses.
	open, close := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || close < open {
		return procStat{}, false
	}
	f := strings.Fields(string(raw[close+1:]))
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return procStat{pid: pid, ppid: ppid, comm: string(raw[open+1 : close]), cpuTicks: ut + st}, true
}

// statusKB returns a "VmRSS:"-style field of /proc/PID/status in KiB.
func statusKB(pid int, field string) int64 {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// pssKB returns the proportional set size of a process (shared pages
// divided among the processes that map them), from smaps_rollup.
func pssKB(pid int) int64 {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			v, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return v
		}
	}
	return 0
}

// descendants returns the processes below root.
func descendants(root int) []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procStat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			children[st.ppid] = append(children[st.ppid], st)
		}
	}
	var out []procStat
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// subtreeTicks returns the CPU ticks of root and its descendants (a
// process that exited is no longer counted).
func subtreeTicks(root int) uint64 {
	if root <= 0 {
		return 0
	}
	st, ok := readStat(root)
	if !ok {
		return 0
	}
	t := st.cpuTicks
	for _, d := range descendants(root) {
		t += d.cpuTicks
	}
	return t
}

// selfTicks returns this process's CPU ticks.
func selfTicks() uint64 {
	st, _ := readStat(os.Getpid())
	return st.cpuTicks
}

// childWithTMPDIR returns the child of parent whose environment has a
// TMPDIR containing marker, or 0: how the benchmark tells its browsers apart.
func childWithTMPDIR(parent int, marker string, skip ...int) int {
	for _, d := range descendants(parent) {
		if d.ppid != parent || slices.Contains(skip, d.pid) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(d.pid), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(raw), "\x00") {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && strings.Contains(v, marker) {
				return d.pid
			}
		}
	}
	return 0
}

// treeSample is one reading of a process and its descendants.
type treeSample struct {
	selfRSSKB     int64
	childRSSKB    int64 // sum over descendants
	childPSSKB    int64 // sum over descendants (only when sampled with pss)
	children      int
	selfTicks     uint64
	childTicks    uint64
	childrenTicks map[int]uint64
}

func sampleTree(pid int, pss bool) treeSample {
	s := treeSample{selfRSSKB: statusKB(pid, "VmRSS:"), childrenTicks: map[int]uint64{}}
	if st, ok := readStat(pid); ok {
		s.selfTicks = st.cpuTicks
	}
	for _, d := range descendants(pid) {
		s.childRSSKB += statusKB(d.pid, "VmRSS:")
		if pss {
			s.childPSSKB += pssKB(d.pid)
		}
		s.children++
		s.childTicks += d.cpuTicks
		s.childrenTicks[d.pid] = d.cpuTicks
	}
	return s
}

// cpuSince returns the CPU seconds the descendants used between two
// samples, counting a process that appeared in between from zero.
func cpuSince(before, after treeSample) float64 {
	var ticks uint64
	for pid, t := range after.childrenTicks {
		if b, ok := before.childrenTicks[pid]; ok && b <= t {
			ticks += t - b
		} else {
			ticks += t
		}
	}
	return float64(ticks) / clockTicks
}
