package harness

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// What the block I/O tools print, read back: gtrace's tools/storage
// biosnoop and biotop, and libbpf-tools' (BCC 0.26) of the same names,
// whose columns they share, and power-of-two histograms in both
// tracers' text.

// BioLine is one line of biosnoop: an I/O.
type BioLine struct {
	Time   float64 // seconds
	Comm   string
	PID    int
	Disk   string
	Op     string // rwbs: R, W, WS, FWFS, ...
	Sector uint64
	Bytes  int
	// Pattern is the -P column (S, R or ?), "" without it; Queued the
	// -Q column in milliseconds, -1 without it.
	Pattern string
	Queued  float64
	Latency float64 // milliseconds
}

// biosnoopLine matches a line of biosnoop, its comm without spaces:
// TIME COMM PID DISK T SECTOR BYTES [P] [QUE] LAT.
var biosnoopLine = regexp.MustCompile(`^\s*(\d+\.\d{6}) +(\S+) +(\d+) +(\S+) +(\S+) +(-?\d+) +(\d+) +(?:([SR?]) +)?(?:(-?\d+\.\d{3}) +)?(\d+\.\d{3})$`)

// ParseBiosnoop reads the I/O lines of biosnoop's output, gtrace's or
// libbpf-tools', and returns the lines it does not read but for empty
// ones: the header, and anything unexpected.
func ParseBiosnoop(out string) (ios []BioLine, other []string) {
	for _, line := range strings.Split(out, "\n") {
		m := biosnoopLine.FindStringSubmatch(line)
		if m == nil {
			if strings.TrimSpace(line) != "" {
				other = append(other, line)
			}
			continue
		}
		l := BioLine{Comm: m[2], Disk: m[4], Op: m[5], Pattern: m[8], Queued: -1}
		l.Time, _ = strconv.ParseFloat(m[1], 64)
		l.PID, _ = strconv.Atoi(m[3])
		// libbpf-tools prints the sector signed: -1 for a flush.
		if s, err := strconv.ParseInt(m[6], 10, 64); err == nil {
			l.Sector = uint64(s)
		} else {
			l.Sector, _ = strconv.ParseUint(m[6], 10, 64)
		}
		l.Bytes, _ = strconv.Atoi(m[7])
		if m[9] != "" {
			l.Queued, _ = strconv.ParseFloat(m[9], 64)
		}
		l.Latency, _ = strconv.ParseFloat(m[10], 64)
		ios = append(ios, l)
	}
	return ios, other
}

// BiotopRow is a row of one of biotop's tables.
type BiotopRow struct {
	Table  int // the table's number, from 0
	PID    int
	Comm   string
	Dir    string // R or W
	Major  int
	Minor  int
	Disk   string
	IOs    int
	Kbytes int
	AvgMs  float64
}

// BiotopHeader is the header of biotop's tables, BCC's.
const BiotopHeader = "PID     COMM             D MAJ MIN DISK       I/O  Kbytes  AVGms"

var (
	biotopRow     = regexp.MustCompile(`^(\d+) +(\S+) +([RW]) +(\d+) +(\d+) +(\S+) +(\d+) +(\d+) +(\d+\.\d{2})$`)
	biotopLoadavg = regexp.MustCompile(`^\d\d:\d\d:\d\d loadavg: [\d.]+ [\d.]+ [\d.]+ \d+/\d+ \d+$`)
)

// ParseBiotop reads biotop's tables, printed without clearing the
// screen (-C), after the first line, banner: each table a loadavg line,
// the header and rows. It returns the rows and the number of tables, and
// fails on a line of none of these kinds but for empty ones.
func ParseBiotop(out, banner string) (rows []BiotopRow, tables int, err error) {
	lines := strings.Split(out, "\n")
	if len(lines) == 0 || lines[0] != banner {
		return nil, 0, fmt.Errorf("the output does not start with %q", banner)
	}
	expectHeader := false
	for i, line := range lines[1:] {
		switch {
		case line == "":
		case biotopLoadavg.MatchString(line):
			expectHeader = true
		case expectHeader && line == BiotopHeader:
			expectHeader = false
			tables++
		case tables > 0 && !expectHeader && biotopRow.MatchString(line):
			m := biotopRow.FindStringSubmatch(line)
			r := BiotopRow{Table: tables - 1, Comm: m[2], Dir: m[3], Disk: m[6]}
			r.PID, _ = strconv.Atoi(m[1])
			r.Major, _ = strconv.Atoi(m[4])
			r.Minor, _ = strconv.Atoi(m[5])
			r.IOs, _ = strconv.Atoi(m[7])
			r.Kbytes, _ = strconv.Atoi(m[8])
			r.AvgMs, _ = strconv.ParseFloat(m[9], 64)
			rows = append(rows, r)
		default:
			return nil, 0, fmt.Errorf("line %d: %q is no part of a table", i+2, line)
		}
	}
	return rows, tables, nil
}

// Log2Hist is a power-of-two histogram by the lower bound of each
// bucket that has a count: 0 for [0, 2), then 2, 4, 8, ... BCC's slots
// and bpftrace's hist() buckets both map onto it: BCC's "0 -> 1" holds
// bpftrace's [0] and [1].
type Log2Hist map[uint64]int

// Total is the sum of the counts.
func (h Log2Hist) Total() int {
	n := 0
	for _, c := range h {
		n += c
	}
	return n
}

// Log2Bucket is the lower bound of v's bucket in a Log2Hist.
func Log2Bucket(v uint64) uint64 {
	if v < 2 {
		return 0
	}
	b := uint64(1)
	for b <= v/2 {
		b *= 2
	}
	return b
}

// gtraceHistRow is a row of a hist() in text: "[4, 8)   24 |@@@ |",
// "[1K, 2K)", "[0]".
var gtraceHistRow = regexp.MustCompile(`^\[(\d+)([KMGTPE]?)(?:, \d+[KMGTPE]?\))?\]?\s+(\d+) \|@*\s*\|$`)

// ParseHist reads the hist() printed after the line head ("@usecs:",
// "@kbytes[dd]:") in gtrace's text output, and says whether there was one.
func ParseHist(out, head string) (Log2Hist, bool) {
	_, rest, ok := strings.Cut("\n"+out, "\n"+head+"\n")
	if !ok {
		return nil, false
	}
	h := Log2Hist{}
	for _, line := range strings.Split(rest, "\n") {
		m := gtraceHistRow.FindStringSubmatch(line)
		if m == nil {
			break
		}
		lo, _ := strconv.ParseUint(m[1], 10, 64)
		if m[2] != "" {
			lo <<= 10 * uint(strings.Index("KMGTPE", m[2])+1)
		}
		if n, _ := strconv.Atoi(m[3]); n > 0 {
			h[Log2Bucket(lo)] += n
		}
	}
	return h, true
}

// bccHistRow is a row of BCC's print_log2_hist: "  8 -> 15  : 5  |***|".
var bccHistRow = regexp.MustCompile(`^\s*(\d+) -> (\d+)\s+: (\d+)\s+\|\**\s*\|$`)

// ParseBCCHist reads the histogram under the first header line that
// names unit ("usecs", "Kbytes") after the line after (or from the start
// with after ""), as libbpf-tools print them, and says whether there was
// one.
func ParseBCCHist(out, after, unit string) (Log2Hist, bool) {
	if after != "" {
		var ok bool
		if _, out, ok = strings.Cut("\n"+out, "\n"+after+"\n"); !ok {
			return nil, false
		}
	}
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != unit || f[1] != ":" || f[2] != "count" {
			continue
		}
		h := Log2Hist{}
		for _, row := range lines[i+1:] {
			m := bccHistRow.FindStringSubmatch(row)
			if m == nil {
				break
			}
			lo, _ := strconv.ParseUint(m[1], 10, 64)
			if n, _ := strconv.Atoi(m[3]); n > 0 {
				h[Log2Bucket(lo)] += n
			}
		}
		return h, true
	}
	return nil, false
}
