package mapmerge

import (
	"math"
	"unicode/utf8"

	"gtrace/output"
)

// decodeFast reads a map as Encode writes it without encoding/json's
// reflection, which costs most of the time of reading a map of many
// keys (docs/fleet-scale.md). It reads the common forms only: keys and
// values that are integers, booleans, symbols or strings without
// escapes, and known fields. On anything else, or a map Decode would
// refuse, it gives up (ok false) and Decode reads the map with
// encoding/json, whose result is the reference: the two must agree
// wherever decodeFast succeeds (FuzzDecode).
func decodeFast(data []byte) (m *output.Map, ok bool) {
	s := &scanner{b: data, ok: true}
	m = &output.Map{}
	version := 0
	kind := ""
	s.object(func(field []byte) {
		switch string(field) {
		case "version":
			version = int(s.int64())
		case "name":
			m.Name = s.str()
		case "kind":
			kind = s.str()
		case "key_names":
			if s.null() {
				m.KeyNames = nil
				return
			}
			m.KeyNames = []string{}
			s.array(func() { m.KeyNames = append(m.KeyNames, s.str()) })
		case "hist_bits":
			n := s.int64()
			if n < math.MinInt32 || n > math.MaxInt32 {
				s.ok = false
			}
			m.HistBits = int(n)
		case "lmin":
			m.LMin = s.int64()
		case "lmax":
			m.LMax = s.int64()
		case "lstep":
			m.LStep = s.int64()
		case "interval":
			m.Interval = s.uint64()
		case "intervals":
			m.Intervals = s.uint64()
		case "tseries_agg":
			m.TSeriesAgg = s.str()
		case "entries":
			// Counted first: growing the slice entry by entry would
			// allocate several times its final size.
			m.Entries = make([]output.Entry, 0, s.count())
			s.array(func() { m.Entries = append(m.Entries, s.entry()) })
			if len(m.Entries) == 0 {
				m.Entries = nil
			}
		case "zero":
			z := s.entry()
			m.Zero = &z
		default:
			s.ok = false
		}
	})
	s.space()
	if !s.ok || s.i != len(s.b) || version != Version {
		return nil, false
	}
	k := -1
	for i, name := range kindNames {
		if name == kind {
			k = i
		}
	}
	if k < 0 {
		return nil, false
	}
	m.Kind = output.Kind(k)
	if checkParams(m) != nil {
		return nil, false
	}
	if m.Kind == output.Hist || m.Kind == output.LHist {
		for _, e := range m.Entries {
			if len(e.Buckets) > maxBuckets(m) {
				return nil, false
			}
		}
		if m.Zero != nil && len(m.Zero.Buckets) > maxBuckets(m) {
			return nil, false
		}
	}
	return m, true
}

// scanner reads JSON from b at i; ok turns false at the first thing it
// does not read, and everything after that is a no-op.
type scanner struct {
	b  []byte
	i  int
	ok bool
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips spaces and reports whether the next byte is c, taking it if so.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.ok && s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) expect(c byte) {
	if !s.next(c) {
		s.ok = false
	}
}

func (s *scanner) null() bool {
	s.space()
	if s.ok && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object calls field for each field of an object, with the scanner at
// its value, which field must read. The name is in b: switching on it
// as a string does not copy it.
func (s *scanner) object(field func(name []byte)) {
	s.expect('{')
	if s.next('}') {
		return
	}
	for s.ok {
		name := s.raw()
		s.expect(':')
		if !s.ok {
			return
		}
		field(name)
		if s.next('}') {
			return
		}
		s.expect(',')
	}
}

// array calls elem for each element of an array, with the scanner at it.
func (s *scanner) array(elem func()) {
	s.expect('[')
	if s.next(']') {
		return
	}
	for s.ok {
		elem()
		if s.next(']') {
			return
		}
		s.expect(',')
	}
}

// count returns the number of elements of the array at the scanner,
// and leaves the scanner where it was.
func (s *scanner) count() int {
	at := s.i
	n := 0
	s.array(func() {
		s.skip()
		n++
	})
	s.i = at
	return n
}

// skip passes over a value without reading it: strings up to their
// closing quote, objects and arrays up to their closing bracket, and
// anything else up to the next delimiter. It checks no more than that:
// the value is read properly afterwards.
func (s *scanner) skip() {
	s.space()
	depth := 0
	for s.ok && s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
		case ',':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
	if depth > 0 {
		s.ok = false
	}
}

// str reads a string without escapes or control characters, in UTF-8.
func (s *scanner) str() string { return string(s.raw()) }

// raw reads a string as str does, and returns its bytes in b.
func (s *scanner) raw() []byte {
	s.expect('"')
	start := s.i
	for s.ok && s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			text := s.b[start:s.i]
			s.i++
			if !utf8.Valid(text) {
				s.ok = false
				return nil
			}
			return text
		case c == '\\' || c < 0x20:
			s.ok = false
		default:
			s.i++
		}
	}
	s.ok = false
	return nil
}

// digits reads an integer without sign as JSON writes it: no leading
// zeros, no fraction or exponent.
func (s *scanner) digits() (uint64, bool) {
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
		s.i++
	}
	if s.i == start || s.b[start] == '0' && s.i-start > 1 {
		return 0, false
	}
	if s.i < len(s.b) {
		if c := s.b[s.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	return n, true
}

func (s *scanner) uint64() uint64 {
	s.space()
	if !s.ok {
		return 0
	}
	n, ok := s.digits()
	if !ok {
		s.ok = false
	}
	return n
}

func (s *scanner) int64() int64 {
	neg := s.next('-')
	if !neg {
		s.space()
	}
	if !s.ok {
		return 0
	}
	n, ok := s.digits()
	switch {
	case !ok:
		s.ok = false
	case neg && n <= 1<<63:
		return int64(-n)
	case !neg && n <= math.MaxInt64:
		return int64(n)
	default:
		s.ok = false
	}
	return 0
}

func (s *scanner) bool() bool {
	s.space()
	for _, lit := range []string{"true", "false"} {
		if s.ok && len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return lit == "true"
		}
	}
	s.ok = false
	return false
}

// value reads a value of one of the forms decodeFast reads.
func (s *scanner) value() output.Value {
	var v output.Value
	types := 0
	var sym *string
	var n uint64
	hasN := false
	s.object(func(field []byte) {
		types++
		switch string(field) {
		case "int":
			v = output.Int(s.int64())
		case "uint":
			v = output.Uint(s.uint64())
		case "bool":
			v = output.Bool(s.bool())
		case "str":
			v = output.Str(s.str())
		case "sym":
			text := s.str()
			sym = &text
		case "n":
			types--
			n, hasN = s.uint64(), true
		default:
			s.ok = false
		}
	})
	switch {
	case types > 1 || hasN && sym == nil:
		s.ok = false
	case sym != nil:
		v = output.Sym(*sym, n)
	}
	return v
}

func (s *scanner) entry() output.Entry {
	var e output.Entry
	s.object(func(field []byte) {
		switch string(field) {
		case "key":
			e.Key = nil
			s.array(func() { e.Key = append(e.Key, s.value()) })
		case "value":
			e.Value = s.value()
		case "count":
			e.Count = s.int64()
		case "total":
			e.Total = s.int64()
		case "buckets":
			e.Buckets = []uint64{}
			s.array(func() { e.Buckets = append(e.Buckets, s.uint64()) })
		case "series":
			e.Series = nil
			s.array(func() {
				var p output.Point
				s.object(func(field []byte) {
					switch string(field) {
					case "epoch":
						p.Epoch = s.uint64()
					case "value":
						p.Value = s.value()
					default:
						s.ok = false
					}
				})
				e.Series = append(e.Series, p)
			})
		default:
			s.ok = false
		}
	})
	return e
}
