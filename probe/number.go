package probe

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// suffixes are the suffixes an integer in an attach point may carry, as
// in bpftrace: C's integer types, with their largest values, and time
// units, which scale to nanoseconds.
var suffixes = map[string]struct{ max, scale uint64 }{
	"": {math.MaxUint64, 1}, "u": {math.MaxUint32, 1}, "ul": {math.MaxUint64, 1},
	"ull": {math.MaxUint64, 1}, "l": {math.MaxInt64, 1}, "ll": {math.MaxInt64, 1},
	"ns": {math.MaxUint64, 1}, "us": {math.MaxUint64, 1e3}, "ms": {math.MaxUint64, 1e6},
	"s": {math.MaxUint64, 1e9}, "m": {math.MaxUint64, 60e9}, "h": {math.MaxUint64, 3600e9},
	"d": {math.MaxUint64, 86400e9},
}

// parseUint reads an unsigned integer of an attach point as bpftrace
// does: '_' separators, a 0x, 0b or 0 prefix for the base, a
// scientific 1e6, and a suffix. Errors are worded as bpftrace's.
func parseUint(text string) (uint64, error) {
	s := strings.ReplaceAll(text, "_", "")
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && (s[:2] == "0b" || s[:2] == "0B"):
		s, base = s[2:], 2
	case len(s) >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '7':
		s, base = s[1:], 8
	}
	end := 0
	for end < len(s) && digitValue(s[end]) < base {
		end++
	}
	if end == 0 {
		return 0, fmt.Errorf("invalid integer: %s", text)
	}
	n, err := strconv.ParseUint(s[:end], base, 64)
	if err != nil {
		return 0, overflow(text, math.MaxUint64)
	}
	rest := s[end:]
	if len(rest) >= 2 && (rest[0] == 'e' || rest[0] == 'E') && rest[1] >= '1' && rest[1] <= '9' {
		if n == 0 || n >= 10 {
			return 0, fmt.Errorf("coefficient part of scientific literal must be 1-9: %s", text)
		}
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		exp, _ := strconv.Atoi(rest[1:i])
		for range exp {
			hi, lo := bits.Mul64(n, 10)
			if hi != 0 {
				return 0, overflow(text, math.MaxUint64)
			}
			n = lo
		}
		rest = rest[i:]
	}
	sfx, ok := suffixes[rest]
	if !ok {
		return 0, fmt.Errorf("invalid trailing bytes: %s", text)
	}
	if n > sfx.max/sfx.scale {
		return 0, overflow(text, sfx.max)
	}
	return n * sfx.scale, nil
}

func overflow(text string, max uint64) error {
	return fmt.Errorf("overflow error, maximum value is %d: %s", max, text)
}

// digitValue is the value of c as a digit of any base up to 16, and 16
// for anything else.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 16
}
