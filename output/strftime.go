package output

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeFormat is the format of time() without arguments.
const DefaultTimeFormat = "%H:%M:%S\n"

// TimeString formats t for time(fmt), as C strftime in the C locale does.
// bpftrace prints nothing, and reports an error, when the result is empty
// or does not fit its 64-byte buffer.
func TimeString(format string, t time.Time) (string, error) {
	s := cStrftime(format, t)
	if s == "" || len(s) >= 64 {
		return "", errors.New("strftime returned zero")
	}
	return s, nil
}

// Strftime formats t for the strftime() builtin. Before calling C strftime,
// bpftrace replaces %f with microseconds (6 digits), then %k with
// nanoseconds (9 digits), then %l with milliseconds (3 digits), as plain
// text replacements. It shows "(?)" for the epoch's first second, for an
// empty result and for one that does not fit maxLen (max_strlen, 1024 by
// default) bytes with its terminating NUL.
func Strftime(format string, t time.Time, maxLen int) string {
	if t.Unix() == 0 {
		return "(?)"
	}
	ns := t.Nanosecond()
	format = strings.ReplaceAll(format, "%f", pad0(ns/1000, 6))
	format = strings.ReplaceAll(format, "%k", pad0(ns, 9))
	format = strings.ReplaceAll(format, "%l", pad0(ns/1000000, 3))
	s := cStrftime(format, t)
	if s == "" || len(s) >= maxLen {
		return "(?)"
	}
	return s
}

func pad0(n, w int) string {
	s := strconv.Itoa(n)
	for len(s) < w {
		s = "0" + s
	}
	return s
}

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
)

// cStrftime is glibc's strftime in the C locale, including its flags
// (_ - 0 ^ #), field widths and the E and O modifiers (which change
// nothing in the C locale). Unknown conversions are copied as they are.
func cStrftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		start := i
		i++
		var padFlag byte
		upper, swap := false, false
	flags:
		for ; i < len(format); i++ {
			switch format[i] {
			case '_', '-', '0':
				padFlag = format[i]
			case '^':
				upper = true
			case '#':
				swap = true
			default:
				break flags
			}
		}
		width := -1
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			if width < 0 {
				width = 0
			}
			if width < 1<<20 {
				width = width*10 + int(format[i]-'0')
			}
		}
		if i < len(format) && (format[i] == 'E' || format[i] == 'O') {
			i++
		}
		if i >= len(format) {
			b.WriteString(format[start:])
			break
		}
		c := conversion(format[i], t)
		if c == nil {
			b.WriteString(format[start : i+1])
			continue
		}
		b.WriteString(c.render(padFlag, width, upper, swap))
	}
	return b.String()
}

// field is one converted value: a number with its default width and
// padding, or text.
type field struct {
	num      int
	numeric  bool
	width    int
	pad      byte
	text     string
	swapCase bool // '#' lowercases this text instead of uppercasing it
}

func number(n, width int, pad byte) *field {
	return &field{num: n, numeric: true, width: width, pad: pad}
}

func text(s string) *field { return &field{text: s} }

func (f *field) render(padFlag byte, width int, upper, swap bool) string {
	if f.numeric {
		pad, w := f.pad, f.width
		switch padFlag {
		case '-':
			w = 0
		case '_':
			pad = ' '
		case '0':
			pad = '0'
		}
		if width >= 0 {
			w = width
		}
		s := strconv.Itoa(abs(f.num))
		if f.num < 0 {
			w--
		}
		for len(s) < w {
			s = string(pad) + s
		}
		if f.num < 0 {
			s = "-" + s
		}
		return s
	}
	s := f.text
	switch {
	case swap && f.swapCase:
		s = strings.ToLower(s)
	case upper || swap:
		s = strings.ToUpper(s)
	}
	pad := " "
	if padFlag == '0' {
		pad = "0"
	}
	for padFlag != '-' && len(s) < width {
		s = pad + s
	}
	return s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func conversion(c byte, t time.Time) *field {
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	isoYear, isoWeek := t.ISOWeek()
	yday := t.YearDay() - 1
	wday := int(t.Weekday())
	switch c {
	case 'a':
		return text(weekdays[wday][:3])
	case 'A':
		return text(weekdays[wday])
	case 'b', 'h':
		return text(months[t.Month()-1][:3])
	case 'B':
		return text(months[t.Month()-1])
	case 'c':
		return text(cStrftime("%a %b %e %H:%M:%S %Y", t))
	case 'C':
		return number(floorDiv(t.Year(), 100), 2, '0')
	case 'd':
		return number(t.Day(), 2, '0')
	case 'D', 'x':
		return text(cStrftime("%m/%d/%y", t))
	case 'e':
		return number(t.Day(), 2, ' ')
	case 'F':
		return text(cStrftime("%Y-%m-%d", t))
	case 'g':
		return number(mod(isoYear, 100), 2, '0')
	case 'G':
		return number(isoYear, 1, '0')
	case 'H':
		return number(t.Hour(), 2, '0')
	case 'I':
		return number(hour12, 2, '0')
	case 'j':
		return number(yday+1, 3, '0')
	case 'k':
		return number(t.Hour(), 2, ' ')
	case 'l':
		return number(hour12, 2, ' ')
	case 'm':
		return number(int(t.Month()), 2, '0')
	case 'M':
		return number(t.Minute(), 2, '0')
	case 'n':
		return text("\n")
	case 'p':
		return &field{text: ampm(t), swapCase: true}
	case 'P':
		return text(strings.ToLower(ampm(t)))
	case 'r':
		return text(cStrftime("%I:%M:%S %p", t))
	case 'R':
		return text(cStrftime("%H:%M", t))
	case 's':
		return number(int(t.Unix()), 1, '0')
	case 'S':
		return number(t.Second(), 2, '0')
	case 't':
		return text("\t")
	case 'T', 'X':
		return text(cStrftime("%H:%M:%S", t))
	case 'u':
		return number((wday+6)%7+1, 1, '0')
	case 'U':
		return number((yday+7-wday)/7, 2, '0')
	case 'V':
		return number(isoWeek, 2, '0')
	case 'w':
		return number(wday, 1, '0')
	case 'W':
		return number((yday+7-(wday+6)%7)/7, 2, '0')
	case 'y':
		return number(mod(t.Year(), 100), 2, '0')
	case 'Y':
		return number(t.Year(), 1, '0')
	case 'z':
		_, off := t.Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		return text(sign + pad0(off/3600*100+off%3600/60, 4))
	case 'Z':
		name, _ := t.Zone()
		return &field{text: name, swapCase: true}
	case '%':
		return text("%")
	}
	return nil
}

func ampm(t time.Time) string {
	if t.Hour() < 12 {
		return "AM"
	}
	return "PM"
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func mod(a, b int) int { return ((a % b) + b) % b }
