package tools

import (
	"fmt"
	"regexp"
	"strings"
)

// The names of the arguments that are argdist specifiers, of -C and -H.
const (
	countSpecifier = "count_specifier"
	histSpecifier  = "hist_specifier"
)

// Specifier is one of BCC argdist's specifiers translated into bpftrace:
// its attach point, and the bodies of the script's spec_*() macros.
type Specifier struct {
	Attach string
	// Macros are the bodies of spec_label(), spec_histogram(),
	// spec_filter(), spec_key() and spec_value().
	Macros map[string]string
}

// specTypes are the C types a specifier may give an expression, with
// the bpftrace cast that reads it as one; char* reads a string.
var specTypes = map[string]string{
	"char": "int8", "s8": "int8", "u8": "uint8", "unsigned char": "uint8",
	"short": "int16", "s16": "int16", "u16": "uint16", "unsigned short": "uint16",
	"int": "int32", "s32": "int32", "u32": "uint32", "unsigned": "uint32", "unsigned int": "uint32",
	"long": "int64", "s64": "int64", "ssize_t": "int64", "off_t": "int64", "loff_t": "int64", "pid_t": "int32",
	"u64": "uint64", "size_t": "uint64", "unsigned long": "uint64",
	"char*": "string",
}

// specType is the cast of a C type, its spaces and a const left out:
// one of specTypes, or a pointer other than char*, an address.
func specType(t string) (cast string, ok bool) {
	t = strings.ReplaceAll(strings.Join(strings.Fields(t), " "), " *", "*")
	t = strings.TrimPrefix(t, "const ")
	if cast, ok := specTypes[t]; ok {
		return cast, true
	}
	return "uint64", strings.HasSuffix(t, "*")
}

// ParseSpecifier translates an argdist specifier,
// {p,r,t,u}:{[library],category}:function(signature)[:type[,type...]:expr[,expr...][:filter]][#label],
// for -C (counts) or -H (a histogram, of one expression). The names of
// the signature's parameters become arg0, arg1, ..., $retval retval,
// and a tracepoint's args->field stays as it is. Without types and
// expressions, each call counts as 1 under its probe's name.
func ParseSpecifier(spec string, histogram bool) (*Specifier, error) {
	s, err := parseSpecifier(spec, histogram)
	if err != nil {
		return nil, fmt.Errorf("specifier %q: %w", spec, err)
	}
	return s, nil
}

func parseSpecifier(spec string, histogram bool) (*Specifier, error) {
	body, label, hasLabel := strings.Cut(spec, "#")
	if !hasLabel {
		label = spec
	}
	parts, err := splitColons(body)
	if err != nil {
		return nil, err
	}
	if len(parts) < 3 || len(parts) == 4 {
		return nil, fmt.Errorf("is not {p,r,t,u}:{[library],category}:function(signature)[:type[,type...]:expr[,expr...][:filter]]")
	}
	kind, lib, fn := parts[0], parts[1], parts[2]
	name, signature, err := splitSignature(fn)
	if err != nil {
		return nil, err
	}
	if len(kind) != 1 || !strings.Contains("prtu", kind) {
		return nil, fmt.Errorf("probe type %q is none of p, r, t and u", kind)
	}
	entry, ret, err := AttachPoint(kind+":"+lib+":"+name, false)
	if err != nil {
		return nil, err
	}
	if strings.Contains(name, "*") {
		return nil, fmt.Errorf("function %q: argdist traces one function, without wildcards", name)
	}
	attach := entry
	if kind == "r" && ret != "" {
		attach = ret
	}
	params := map[string]string{}
	for i, p := range signature {
		params[p] = fmt.Sprintf("arg%d", i)
	}
	tr := translator{kind: kind, params: params}
	s := &Specifier{Attach: attach, Macros: map[string]string{
		"spec_label":     quote(label),
		"spec_histogram": fmt.Sprint(histogram),
		"spec_filter":    "true",
		"spec_key":       "probe",
		"spec_value":     "1",
	}}
	if len(parts) == 3 {
		if histogram {
			return nil, fmt.Errorf("a histogram needs a type and an expression")
		}
		return s, nil
	}
	types, exprs := splitCommas(parts[3]), splitCommas(parts[4])
	if len(types) != len(exprs) {
		return nil, fmt.Errorf("%d types for %d expressions", len(types), len(exprs))
	}
	if histogram && len(exprs) != 1 {
		return nil, fmt.Errorf("a histogram is of one expression, not %d", len(exprs))
	}
	var values []string
	for i, e := range exprs {
		code, err := tr.translate(e)
		if err != nil {
			return nil, err
		}
		cast, ok := specType(types[i])
		switch {
		case !ok:
			return nil, fmt.Errorf("type %q is none of gtrace's argdist's: int, long, size_t, u32, s64, char*, ...", types[i])
		case cast == "string" && histogram:
			return nil, fmt.Errorf("a histogram is of numbers, not of %s", types[i])
		case cast == "string":
			values = append(values, "str("+code+")")
		default:
			values = append(values, "("+cast+")("+code+")")
		}
	}
	s.Macros["spec_key"] = values[0]
	if len(values) > 1 {
		s.Macros["spec_key"] = "(" + strings.Join(values, ", ") + ")"
	}
	s.Macros["spec_value"] = values[0]
	if len(parts) > 5 {
		filter, err := tr.translate(strings.Join(parts[5:], ":"))
		if err != nil {
			return nil, err
		}
		s.Macros["spec_filter"] = "(" + filter + ")"
	}
	return s, nil
}

// splitColons splits a specifier at the colons outside parentheses.
func splitColons(s string) ([]string, error) {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ':':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
		if depth < 0 {
			return nil, fmt.Errorf("a ) at %d closes nothing", i)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("a ( is not closed")
	}
	return append(parts, s[start:]), nil
}

// splitSignature splits function(type name, ...) into the function's
// name and its parameters' names.
func splitSignature(fn string) (name string, params []string, err error) {
	name, sig, ok := strings.Cut(fn, "(")
	if !ok || !strings.HasSuffix(sig, ")") {
		return "", nil, fmt.Errorf("%q is not function(signature)", fn)
	}
	sig = strings.TrimSpace(strings.TrimSuffix(sig, ")"))
	if sig == "" || sig == "void" {
		return name, nil, nil
	}
	for _, p := range strings.Split(sig, ",") {
		m := lastName.FindStringSubmatch(p)
		if m == nil {
			return "", nil, fmt.Errorf("parameter %q of %s has no name", strings.TrimSpace(p), name)
		}
		params = append(params, m[1])
	}
	return name, params, nil
}

// lastName is the name that ends a parameter's declaration.
var lastName = regexp.MustCompile(`[\s*]([A-Za-z_]\w*)\s*$`)

// splitCommas splits a list of types or expressions at the commas
// outside parentheses.
func splitCommas(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// translator translates a specifier's expressions and filter into
// bpftrace for a probe of kind, whose signature names params.
type translator struct {
	kind   string
	params map[string]string
}

// specToken is a name, or a $name, or a string literal, which is
// skipped.
var specToken = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\$?[A-Za-z_]\w*`)

// translate rewrites the names of an expression: a parameter's is
// arg0, arg1, ..., $retval is retval; a field's name (after . or ->) and
// the names bpftrace knows (pid, comm, args, ...) stay as they are.
func (tr translator) translate(expr string) (string, error) {
	if strings.TrimSpace(expr) == "" {
		return "", fmt.Errorf("an expression is empty")
	}
	var out strings.Builder
	last := 0
	for _, m := range specToken.FindAllStringIndex(expr, -1) {
		tok := expr[m[0]:m[1]]
		before := strings.TrimRight(expr[:m[0]], " ")
		field := strings.HasSuffix(before, ".") || strings.HasSuffix(before, "->")
		code := tok
		switch {
		case tok[0] == '"' || field:
		case tok == "$retval" && tr.kind == "r":
			code = "retval"
		case tok == "$retval":
			return "", fmt.Errorf("expression %q: $retval is a return's (r:), not a %s: probe's", expr, tr.kind)
		case tok[0] == '$':
			return "", fmt.Errorf("expression %q: %s is none of gtrace's argdist's: $retval only", expr, tok)
		case tr.params[tok] != "" && tr.kind == "r":
			return "", fmt.Errorf("expression %q: %s is an argument, which a return (r:) does not see in gtrace's argdist: $retval only", expr, tok)
		case tr.params[tok] != "":
			code = tr.params[tok]
		}
		out.WriteString(expr[last:m[0]] + code)
		last = m[1]
	}
	out.WriteString(expr[last:])
	return out.String(), nil
}

// quote is s as a bpftrace string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
