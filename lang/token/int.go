package token

import (
	"fmt"
	"strconv"
	"strings"
)

// intUnits are the multipliers of the integer suffixes, with the largest
// value each may produce: C's integer types, and time units, which scale
// to nanoseconds.
var intUnits = map[string]struct{ max, mul uint64 }{
	"":    {1<<64 - 1, 1},
	"u":   {1<<32 - 1, 1},
	"ul":  {1<<64 - 1, 1},
	"ull": {1<<64 - 1, 1},
	"lu":  {1<<64 - 1, 1},
	"llu": {1<<64 - 1, 1},
	"l":   {1<<63 - 1, 1},
	"ll":  {1<<63 - 1, 1},
	"ns":  {1<<64 - 1, 1},
	"us":  {1<<64 - 1, 1000},
	"ms":  {1<<64 - 1, 1_000_000},
	"s":   {1<<64 - 1, 1_000_000_000},
	"m":   {1<<64 - 1, 60_000_000_000},
	"h":   {1<<64 - 1, 3_600_000_000_000},
	"d":   {1<<64 - 1, 86_400_000_000_000},
}

// ParseInt gives the value of an integer literal, of a program or of an
// attach point, as bpftrace reads both: '_' separators; hex (0x), binary
// (0b), octal with a leading 0, or decimal with an optional exponent
// (only 1-9 before it); and a suffix. The messages are bpftrace's.
func ParseInt(lit string) (uint64, error) {
	n := strings.ReplaceAll(lit, "_", "")
	base, digits := 10, n
	switch {
	case len(n) >= 2 && (n[:2] == "0x" || n[:2] == "0X"):
		base, digits = 16, n[2:]
	case len(n) >= 2 && (n[:2] == "0b" || n[:2] == "0B"):
		base, digits = 2, n[2:]
	case len(n) >= 2 && n[0] == '0' && n[1] >= '0' && n[1] <= '7':
		base, digits = 8, n[1:]
	}
	end := 0
	for end < len(digits) && digitVal(digits[end]) < base {
		end++
	}
	if end == 0 {
		return 0, fmt.Errorf("invalid integer: %s", lit)
	}
	v, err := strconv.ParseUint(digits[:end], base, 64)
	if err != nil {
		return 0, overflow(intUnits[""].max, lit)
	}
	rest := digits[end:]
	if base == 10 && len(rest) >= 2 && (rest[0] == 'e' || rest[0] == 'E') && rest[1] >= '1' && rest[1] <= '9' {
		if v == 0 || v >= 10 {
			return 0, fmt.Errorf("coefficient part of scientific literal must be 1-9: %s", lit)
		}
		e := 1
		for e < len(rest) && rest[e] >= '0' && rest[e] <= '9' {
			e++
		}
		exp, err := strconv.Atoi(rest[1:e])
		for ; err == nil && exp > 0; exp-- {
			if v > (1<<64-1)/10 {
				err = strconv.ErrRange
			}
			v *= 10
		}
		if err != nil {
			return 0, overflow(intUnits[""].max, lit)
		}
		rest = rest[e:]
	}
	if strings.Trim(rest, "uUlL") == "" {
		rest = strings.ToLower(rest) // C's integer suffixes, in either case
	}
	u, ok := intUnits[rest]
	if !ok {
		return 0, fmt.Errorf("invalid trailing bytes: %s", lit)
	}
	if v > u.max/u.mul {
		return 0, overflow(u.max, lit)
	}
	return v * u.mul, nil
}

func overflow(max uint64, lit string) error {
	return fmt.Errorf("overflow error, maximum value is %d: %s", max, lit)
}

// digitVal returns the value of a digit in bases up to 16, or 16.
func digitVal(c byte) int {
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
