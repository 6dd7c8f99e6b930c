package output

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Format is a parsed printf format string, following bpftrace v0.26: the
// conversions are done like C++ streams, not like C printf (see doc.go).
type Format struct {
	fragments []string // text around specs; len(specs)+1 of them
	specs     []spec
}

type spec struct {
	left, plus, alt, zero bool   // flags '-', '+', '#', '0'; ' ' is parsed and ignored
	width, precision      int    // precision is parsed but not applied, as in bpftrace v0.26
	length                string // any run of h l L j z t
	conv                  string // d, s, rx, gr, ...
}

// MaxWidth bounds widths and precisions. bpftrace crashes on those its
// std::stoi cannot read, and pads to any other: a width of 999999999
// wrote a gigabyte per event.
const MaxWidth = 1<<16 - 1

// ErrTooWide is returned, wrapped, for a width or precision above MaxWidth.
var ErrTooWide = errors.New("too large")

// ParseFormat parses a printf format the way bpftrace does: text that does
// not form a conversion is kept as is, "%%" (with any flags) before a
// conversion is a '%'. The text after the last conversion is printed as
// written, "%%" included, as bpftrace 0.17 prints it. ParseFormat fails
// on conversions bpftrace parses but cannot print, such as %f, and on
// widths and precisions above MaxWidth. bpftrace reports argument count
// errors before these; call Check for those.
func ParseFormat(s string) (*Format, error) {
	f := &Format{}
	var text strings.Builder
	last := 0 // where the text after the last conversion starts
	for i := 0; i < len(s); {
		if s[i] != '%' {
			text.WriteByte(s[i])
			i++
			continue
		}
		sp, n, ok := parseSpec(s[i:])
		if !ok {
			text.WriteByte('%')
			i++
			continue
		}
		i += n
		switch {
		case sp.width > MaxWidth:
			return nil, fmt.Errorf("format width %w: %s", ErrTooWide, s[i-n:i])
		case sp.precision > MaxWidth:
			return nil, fmt.Errorf("format precision %w: %s", ErrTooWide, s[i-n:i])
		}
		if sp.conv == "%" {
			text.WriteByte('%')
			continue
		}
		if _, ok := argClasses[sp.conv]; !ok {
			return nil, errors.New("unsupported format specifier: " + sp.conv)
		}
		f.fragments = append(f.fragments, text.String())
		text.Reset()
		f.specs = append(f.specs, sp)
		last = i
	}
	f.fragments = append(f.fragments, s[last:])
	return f, nil
}

// parseSpec matches one conversion at the start of s (which starts with
// '%') as bpftrace's regular expression
// %(-?)(\+?)( ?)(#?)(0?)(\*|\d+)?(?:\.(\*|\d+))?([hlLjzt]*)(conversion)
// and returns it with its length in bytes.
func parseSpec(s string) (sp spec, n int, ok bool) {
	i := 1
	flag := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	sp.left = flag('-')
	sp.plus = flag('+')
	flag(' ')
	sp.alt = flag('#')
	sp.zero = flag('0')
	digits := func() (string, bool) {
		if flag('*') {
			return "", true // '*' is accepted but takes no argument
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[j:i], i > j
	}
	if w, ok := digits(); ok {
		sp.width = specNumber(w)
	}
	if i+1 < len(s) && s[i] == '.' {
		save := i
		i++
		p, ok := digits()
		if !ok {
			i = save // a '.' without digits is not part of the spec
		}
		sp.precision = specNumber(p)
	}
	j := i
	for i < len(s) && strings.IndexByte("hlLjzt", s[i]) >= 0 {
		i++
	}
	sp.length = s[j:i]
	for _, c := range []string{"gr", "g", "rh", "rx", "r"} {
		if strings.HasPrefix(s[i:], c) {
			sp.conv = c
			return sp, i + len(c), true
		}
	}
	if i < len(s) && strings.IndexByte("diouxXeEfFGaAcspn%", s[i]) >= 0 {
		sp.conv = s[i : i+1]
		return sp, i + 1, true
	}
	return spec{}, 0, false
}

// specNumber returns the value of a width or precision, 0 for none or '*',
// and MaxWidth+1 for any value above MaxWidth.
func specNumber(digits string) int {
	v, err := strconv.Atoi(digits)
	switch {
	case digits == "":
		return 0
	case err != nil || v > MaxWidth:
		return MaxWidth + 1
	}
	return v
}

// ArgClass is what printf needs to know of an argument's type.
type ArgClass uint8

const (
	ArgOther   ArgClass = iota // strings, stacks, tuples, ...: only %s
	ArgInt                     // integers, including enums
	ArgBool                    // booleans
	ArgPointer                 // pointers
	ArgBuffer                  // buf()
	ArgNone                    // none/void: never printable
)

// Arg describes one printf argument for Check.
type Arg struct {
	Class ArgClass
	Type  string // bpftrace's name of the type, for errors: "string[6]"
}

var anyInteger = []ArgClass{ArgInt, ArgBool, ArgPointer}

// argClasses lists the supported conversions and the argument types each
// accepts; nil accepts anything.
var argClasses = map[string][]ArgClass{
	"d": anyInteger, "i": anyInteger, "u": anyInteger, "o": anyInteger,
	"x": anyInteger, "X": anyInteger, "c": anyInteger, "p": anyInteger,
	"gr": anyInteger,
	"r":  {ArgBuffer}, "rx": {ArgBuffer}, "rh": {ArgBuffer},
	"s": nil,
}

// NumArgs is the number of arguments the format takes.
func (f *Format) NumArgs() int { return len(f.specs) }

// Check reports, in bpftrace's words, why args cannot be printed.
func (f *Format) Check(args []Arg) error {
	if len(args) < len(f.specs) {
		return fmt.Errorf("not enough arguments for format string (%d supplied, %d expected)", len(args), len(f.specs))
	}
	if len(args) > len(f.specs) {
		return fmt.Errorf("too many arguments for format string (%d supplied, %d expected)", len(args), len(f.specs))
	}
	for i, sp := range f.specs {
		if args[i].Class == ArgNone {
			return errors.New("unable to print none type for specifier: " + sp.conv)
		}
		allowed := argClasses[sp.conv]
		if allowed == nil {
			continue
		}
		ok := false
		for _, c := range allowed {
			ok = ok || c == args[i].Class
		}
		if !ok {
			return fmt.Errorf("unsupported format specifier for type '%s': %s", args[i].Type, sp.conv)
		}
	}
	return nil
}

// Sprint formats args. A value a conversion cannot take prints as
// "!{reason}" in its place, as bpftrace does.
func (f *Format) Sprint(args []Value) string {
	var b strings.Builder
	for i := 0; i < len(args) && i < len(f.specs); i++ {
		b.WriteString(f.fragments[i])
		s, err := f.specs[i].apply(args[i])
		if err != nil {
			s = "!{" + err.Error() + "}"
		}
		b.WriteString(s)
	}
	b.WriteString(f.fragments[len(f.fragments)-1])
	return b.String()
}

func (sp spec) pad(s string) string {
	if len(s) >= sp.width {
		return s
	}
	fill := strings.Repeat(" ", sp.width-len(s))
	if sp.zero {
		fill = strings.Repeat("0", sp.width-len(s))
	}
	if sp.left {
		return s + fill
	}
	return fill + s
}

func (sp spec) apply(v Value) (string, error) {
	switch sp.conv {
	case "s":
		return sp.text(v), nil
	case "r", "rx", "rh":
		if v.tag != tagBuf {
			return sp.text(v), nil
		}
		return sp.pad(hexBuffer(v.s, sp.conv == "r", sp.conv != "rh")), nil
	case "gr":
		if v.tag != tagInt && v.tag != tagUint && v.tag != tagSym {
			return "", errors.New("invalid GFP flags conversion: " + v.String())
		}
		return sp.pad(gfpFlags(v.n)), nil
	}
	if v.tag != tagInt && v.tag != tagUint && v.tag != tagBool && v.tag != tagSym {
		return "", errors.New("invalid integer conversion: " + v.String())
	}
	n := v.n
	var s string
	switch sp.conv {
	case "d", "i":
		x := int64(int32(n))
		switch sp.length {
		case "hh":
			x = int64(int8(n))
		case "h":
			x = int64(int16(n))
		case "l", "ll", "j", "z", "t":
			x = int64(n)
		}
		s = strconv.FormatInt(x, 10)
		if sp.plus && x >= 0 {
			s = "+" + s
		}
	case "c":
		s = string([]byte{byte(n)})
	case "p":
		// C++ prints a pointer in hex with 0x, except a null one as 0.
		s = "0"
		if n != 0 {
			s = "0x" + strconv.FormatUint(n, 16)
		}
	default: // u o x X
		x := uint64(uint32(n))
		switch sp.length {
		case "hh":
			x = uint64(uint8(n))
		case "h":
			x = uint64(uint16(n))
		case "l", "ll", "j", "z", "t":
			x = n
		}
		s = sp.unsigned(x)
	}
	return sp.pad(s), nil
}

func (sp spec) unsigned(x uint64) string {
	switch sp.conv {
	case "o":
		s := strconv.FormatUint(x, 8)
		if sp.alt && x != 0 {
			s = "0" + s
		}
		return s
	case "x":
		s := strconv.FormatUint(x, 16)
		if sp.alt && x != 0 {
			s = "0x" + s
		}
		return s
	case "X":
		s := strings.ToUpper(strconv.FormatUint(x, 16))
		if sp.alt && x != 0 {
			s = "0X" + s
		}
		return s
	}
	return strconv.FormatUint(x, 10)
}

// text is %s. A C++ stream pads only the first thing written, which for
// tuples, arrays and records is their opening bracket.
func (sp spec) text(v Value) string {
	var b strings.Builder
	v.writeText(&b, sp.plus)
	s := b.String()
	first := len(s)
	switch v.tag {
	case tagTuple, tagArray:
		first = 1
	case tagRecord:
		first = 2
	}
	return sp.pad(s[:first]) + s[first:]
}

// gfpFlags names GFP allocation flags the way bpftrace's %gr does, after
// the kernel's include/trace/events/mmflags.h: compound names first, then
// single flags, then any leftover bits in hex.
func gfpFlags(flags uint64) string {
	if flags == 0 {
		return "0"
	}
	var names []string
	for _, f := range gfpNames {
		if flags&f.mask == f.mask {
			names = append(names, f.name)
			flags &^= f.mask
		}
	}
	if flags != 0 {
		names = append(names, "0x"+strconv.FormatUint(flags, 16))
	}
	return strings.Join(names, "|")
}

// Bit numbers from linux/gfp_types.h.
const (
	gfpDMA           = 1 << 0
	gfpHighmem       = 1 << 1
	gfpDMA32         = 1 << 2
	gfpMovable       = 1 << 3
	gfpHigh          = 1 << 5
	gfpIO            = 1 << 6
	gfpFS            = 1 << 7
	gfpZero          = 1 << 8
	gfpDirectReclaim = 1 << 10
	gfpKswapdReclaim = 1 << 11
	gfpWrite         = 1 << 12
	gfpNowarn        = 1 << 13
	gfpRetryMayfail  = 1 << 14
	gfpNofail        = 1 << 15
	gfpNoretry       = 1 << 16
	gfpMemalloc      = 1 << 17
	gfpComp          = 1 << 18
	gfpNomemalloc    = 1 << 19
	gfpHardwall      = 1 << 20
	gfpThisnode      = 1 << 21
	gfpAccount       = 1 << 22
	gfpZerotags      = 1 << 23
	gfpSkipZero      = 1 << 24
	gfpSkipKasan     = 1 << 25
	gfpNoObjExt      = 1 << 26

	gfpReclaim         = gfpDirectReclaim | gfpKswapdReclaim
	gfpAtomic          = gfpHigh | gfpKswapdReclaim
	gfpKernel          = gfpReclaim | gfpIO | gfpFS
	gfpKernelAccount   = gfpKernel | gfpAccount
	gfpNowait          = gfpKswapdReclaim | gfpNowarn
	gfpNoio            = gfpReclaim
	gfpNofs            = gfpNoio | gfpIO
	gfpUser            = gfpNofs | gfpFS | gfpHardwall
	gfpHighuser        = gfpUser | gfpHighmem
	gfpHighuserMovable = gfpHighuser | gfpMovable | gfpSkipKasan
	gfpTranshugeLight  = (gfpHighuserMovable | gfpComp | gfpNomemalloc | gfpNowarn) &^ gfpReclaim
	gfpTranshuge       = gfpTranshugeLight | gfpDirectReclaim
)

var gfpNames = []struct {
	mask uint64
	name string
}{
	{gfpTranshuge, "GFP_TRANSHUGE"},
	{gfpTranshugeLight, "GFP_TRANSHUGE_LIGHT"},
	{gfpHighuserMovable, "GFP_HIGHUSER_MOVABLE"},
	{gfpHighuser, "GFP_HIGHUSER"},
	{gfpUser, "GFP_USER"},
	{gfpKernelAccount, "GFP_KERNEL_ACCOUNT"},
	{gfpKernel, "GFP_KERNEL"},
	{gfpNofs, "GFP_NOFS"},
	{gfpAtomic, "GFP_ATOMIC"},
	{gfpNoio, "GFP_NOIO"},
	{gfpNowait, "GFP_NOWAIT"},
	{gfpDMA, "GFP_DMA"},
	{gfpHighmem, "__GFP_HIGHMEM"},
	{gfpDMA32, "GFP_DMA32"},
	{gfpHigh, "__GFP_HIGH"},
	{gfpIO, "__GFP_IO"},
	{gfpFS, "__GFP_FS"},
	{gfpZero, "__GFP_ZERO"},
	{gfpDirectReclaim, "__GFP_DIRECT_RECLAIM"},
	{gfpKswapdReclaim, "__GFP_KSWAPD_RECLAIM"},
	{gfpWrite, "__GFP_WRITE"},
	{gfpNowarn, "__GFP_NOWARN"},
	{gfpRetryMayfail, "__GFP_RETRY_MAYFAIL"},
	{gfpNofail, "__GFP_NOFAIL"},
	{gfpNoretry, "__GFP_NORETRY"},
	{gfpMemalloc, "__GFP_MEMALLOC"},
	{gfpComp, "__GFP_COMP"},
	{gfpNomemalloc, "__GFP_NOMEMALLOC"},
	{gfpHardwall, "__GFP_HARDWALL"},
	{gfpThisnode, "__GFP_THISNODE"},
	{gfpAccount, "__GFP_ACCOUNT"},
	{gfpZerotags, "__GFP_ZEROTAGS"},
	{gfpSkipZero, "__GFP_SKIP_ZERO"},
	{gfpSkipKasan, "__GFP_SKIP_KASAN"},
	{gfpNoObjExt, "__GFP_NO_OBJ_EXT"},
}
