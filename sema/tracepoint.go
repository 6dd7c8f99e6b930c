package sema

import (
	"fmt"
	"strings"

	"gtrace/kernel"
)

// argFields types the fields of a tracepoint's format for args.
func (c *checker) argFields(f *kernel.Format) []*ArgField {
	fields := make([]*ArgField, 0, len(f.Fields))
	for _, kf := range f.Fields {
		af := &ArgField{Name: kf.Name, Offset: kf.Offset, Size: kf.Size}
		isChar := strings.HasPrefix(strings.TrimPrefix(kf.CType, "const "), "char") && !strings.Contains(kf.CType, "*")
		switch {
		case kf.DataLoc && isChar:
			af.DataLoc = true
			af.Type = StringType(c.opts.Config.MaxStrlen)
		case kf.ArrayLen > 0 && isChar:
			af.InRecord = true
			af.Type = StringType(kf.ArrayLen)
		case kf.ArrayLen > 0 && !kf.DataLoc && isIntSize(kf.Size/kf.ArrayLen) && kf.Size%kf.ArrayLen == 0:
			af.InRecord = true
			af.Type = ArrayType(IntType(kf.Size/kf.ArrayLen, kf.Signed), kf.ArrayLen)
		case kf.DataLoc || kf.ArrayLen > 0:
			af.Type = nil // dynamic arrays other than strings need kernel types
		case strings.Contains(kf.CType, "*"):
			af.Type = c.argPointer(kf.CType)
		case isIntSize(kf.Size):
			af.Type = IntType(kf.Size, kf.Signed)
		}
		fields = append(fields, af)
	}
	return fields
}

// argPointer types a pointer field of a tracepoint record: a pointer to
// a kernel struct or union can be followed with ->; any other pointer is
// an address, as bpftrace 0.17's tools expect (str(args->filename)).
func (c *checker) argPointer(ctype string) *Type {
	base := strings.TrimSpace(strings.TrimPrefix(ctype, "const "))
	name, stars, _ := strings.Cut(base, "*")
	name = strings.TrimSpace(name)
	if strings.TrimSpace(stars) != "" || !isCompositeName(name) || strings.HasPrefix(name, "enum ") {
		return Uint64
	}
	t, err := c.opts.KernelType(name)
	if err != nil {
		return Uint64
	}
	return &Type{Kind: Pointer, Size: 8, BTF: t}
}

func isIntSize(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// tracepointFormat reads a tracepoint's format, with a message for the user.
func tracepointFormat(category, event string) (*kernel.Format, error) {
	f, err := kernel.TracepointFormat(category, event)
	if err != nil {
		return nil, fmt.Errorf("can not read the format of tracepoint:%s:%s: %v", category, event, err)
	}
	return f, nil
}
