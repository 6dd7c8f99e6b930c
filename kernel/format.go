package kernel

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format is a parsed tracepoint format file.
type Format struct {
	ID uint32
	// Fields are the tracepoint's own fields, which bpftrace exposes as args.
	Fields []Field
	// Common are the common_* fields every event starts with.
	Common []Field
}

// Field is one field of a tracepoint record.
type Field struct {
	Name string
	// CType is the C type without the name, e.g. "const char *",
	// "char[16]", or "char[]" for a __data_loc field.
	CType  string
	Offset int
	Size   int
	Signed bool
	// DataLoc marks a __data_loc field: the record holds a u32 whose low
	// 16 bits are the data offset and high 16 bits its length.
	DataLoc bool
	// ArrayLen is the element count of a fixed-size array, 0 otherwise.
	ArrayLen int
	// Decl is the declaration as written in the format file, which is what
	// bpftrace -lv prints.
	Decl string
}

// TracepointFormat reads and parses events/<category>/<event>/format.
func TracepointFormat(category, event string) (*Format, error) {
	b, err := readTracefs("events/" + category + "/" + event + "/format")
	if err != nil {
		return nil, fmt.Errorf("tracepoint %s:%s: %w", category, event, err)
	}
	f, err := ParseFormat(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("tracepoint %s:%s: %w", category, event, err)
	}
	return f, nil
}

// ParseFormat parses the contents of a tracepoint format file.
func ParseFormat(r io.Reader) (*Format, error) {
	var (
		f      Format
		common = true
		seenID bool
	)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[len("ID:"):]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("parse ID: %w", err)
			}
			f.ID = uint32(id)
			seenID = true
		case line == "" && len(f.Common) > 0:
			// The kernel separates the common fields from the event's
			// own fields with an empty line.
			common = false
		case strings.HasPrefix(strings.TrimSpace(line), "field:"):
			field, err := parseField(line)
			if err != nil {
				return nil, err
			}
			if common {
				f.Common = append(f.Common, field)
			} else {
				f.Fields = append(f.Fields, field)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read format: %w", err)
	}
	if !seenID {
		return nil, fmt.Errorf("format has no ID line")
	}
	return &f, nil
}

// parseField parses a line like
//
//	field:char comm[16];	offset:8;	size:16;	signed:0;
func parseField(line string) (Field, error) {
	var f Field
	var haveOffset, haveSize bool
	for _, part := range strings.Split(line, ";") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			continue
		}
		var err error
		switch key {
		case "field":
			err = parseDecl(&f, value)
		case "offset":
			f.Offset, err = strconv.Atoi(value)
			haveOffset = true
		case "size":
			f.Size, err = strconv.Atoi(value)
			haveSize = true
		case "signed":
			f.Signed = value == "1"
		}
		if err != nil {
			return Field{}, fmt.Errorf("parse field %q: %w", line, err)
		}
	}
	if f.Name == "" || !haveOffset || !haveSize {
		return Field{}, fmt.Errorf("parse field %q: missing name, offset or size", line)
	}
	return f, nil
}

// parseDecl splits a C declaration like "unsigned long args[6]" or
// "__data_loc char[] filename" into type and name.
func parseDecl(f *Field, decl string) error {
	f.Decl = decl
	i := strings.LastIndexAny(decl, " \t")
	if i < 0 {
		return fmt.Errorf("no type in %q", decl)
	}
	ctype, name := strings.TrimSpace(decl[:i]), decl[i+1:]
	// Keep "char *p" consistent with the kernel's usual "char * p".
	if stars := len(name) - len(strings.TrimLeft(name, "*")); stars > 0 {
		ctype += " " + name[:stars]
		name = name[stars:]
	}

	if rest, ok := strings.CutPrefix(ctype, "__data_loc "); ok {
		f.DataLoc = true
		ctype = strings.TrimSpace(rest)
	}

	if open := strings.IndexByte(name, '['); open >= 0 {
		dim, ok := strings.CutSuffix(name[open+1:], "]")
		if !ok {
			return fmt.Errorf("unterminated array in %q", decl)
		}
		if dim != "" {
			n, err := strconv.Atoi(dim)
			if err != nil {
				return fmt.Errorf("array size in %q: %w", decl, err)
			}
			f.ArrayLen = n
		}
		ctype += "[" + dim + "]"
		name = name[:open]
	}

	f.Name = name
	f.CType = ctype
	return nil
}
