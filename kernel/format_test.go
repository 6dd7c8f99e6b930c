package kernel

import (
	"gtrace/internal/testutils"

	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const commonFields = `format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

`

func TestParseFormat(t *testing.T) {
	tests := []struct {
		name   string
		format string
		id     uint32
		fields []Field
	}{
		{
			name: "array and pointer",
			format: "name: sys_enter\nID: 21\n" + commonFields +
				"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n" +
				"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n" +
				"\tfield:const char * filename;\toffset:64;\tsize:8;\tsigned:0;\n" +
				"\nprint fmt: \"NR %ld\", REC->id\n",
			id: 21,
			fields: []Field{
				{Name: "id", CType: "long", Offset: 8, Size: 8, Signed: true, Decl: "long id"},
				{Name: "args", CType: "unsigned long[6]", Offset: 16, Size: 48, ArrayLen: 6, Decl: "unsigned long args[6]"},
				{Name: "filename", CType: "const char *", Offset: 64, Size: 8, Decl: "const char * filename"},
			},
		},
		{
			name: "data_loc and char array",
			format: "name: sched_process_exec\nID: 300\n" + commonFields +
				"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n" +
				"\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n" +
				"\tfield:__data_loc u64[] phys_addrs;\toffset:28;\tsize:4;\tsigned:0;\n",
			id: 300,
			fields: []Field{
				{Name: "filename", CType: "char[]", Offset: 8, Size: 4, DataLoc: true, Decl: "__data_loc char[] filename"},
				{Name: "comm", CType: "char[16]", Offset: 12, Size: 16, ArrayLen: 16, Decl: "char comm[16]"},
				{Name: "phys_addrs", CType: "u64[]", Offset: 28, Size: 4, DataLoc: true, Decl: "__data_loc u64[] phys_addrs"},
			},
		},
		{
			name: "star attached to name",
			format: "ID: 7\n" + commonFields +
				"\tfield:const char *const * argv;\toffset:8;\tsize:8;\tsigned:0;\n",
			id: 7,
			fields: []Field{
				{Name: "argv", CType: "const char *const *", Offset: 8, Size: 8, Decl: "const char *const * argv"},
			},
		},
		{
			name:   "no own fields",
			format: "ID: 9\n" + commonFields + "print fmt: \"\"\n",
			id:     9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFormat(strings.NewReader(tt.format))
			if err != nil {
				t.Fatal(err)
			}
			if f.ID != tt.id {
				t.Errorf("ID = %d, want %d", f.ID, tt.id)
			}
			if !reflect.DeepEqual(f.Fields, tt.fields) {
				t.Errorf("Fields =\n%+v\nwant\n%+v", f.Fields, tt.fields)
			}
			if len(f.Common) != 4 || f.Common[3].Name != "common_pid" || !f.Common[3].Signed {
				t.Errorf("Common = %+v, want the four common_ fields", f.Common)
			}
		})
	}
}

func TestParseFormatErrors(t *testing.T) {
	tests := []struct {
		name   string
		format string
	}{
		{"no ID", commonFields},
		{"bad ID", "ID: x\n"},
		{"bad array size", "ID: 1\n\tfield:char comm[N];\toffset:8;\tsize:16;\tsigned:0;\n"},
		{"unterminated array", "ID: 1\n\tfield:char comm[16;\toffset:8;\tsize:16;\tsigned:0;\n"},
		{"no offset", "ID: 1\n\tfield:int x;\tsize:4;\tsigned:0;\n"},
		{"no type", "ID: 1\n\tfield:x;\toffset:8;\tsize:4;\tsigned:0;\n"},
		{"bad size", "ID: 1\n\tfield:int x;\toffset:8;\tsize:four;\tsigned:0;\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f, err := ParseFormat(strings.NewReader(tt.format)); err == nil {
				t.Errorf("ParseFormat succeeded with %+v, want an error", f)
			}
		})
	}
}

// TestTracepointFormatLive parses every format file the kernel has.
func TestTracepointFormatLive(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "events/*/*/format"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no tracepoint format files found")
	}
	for _, file := range files {
		event := filepath.Base(filepath.Dir(file))
		category := filepath.Base(filepath.Dir(filepath.Dir(file)))
		f, err := TracepointFormat(category, event)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, field := range f.Fields {
			if strings.HasPrefix(field.Name, "common_") || strings.ContainsAny(field.Name, "*[] ") {
				t.Errorf("%s:%s: bad field %+v", category, event, field)
			}
		}
	}

	f, err := TracepointFormat("sched", "sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	id, err := os.ReadFile(filepath.Join(dir, "events/sched/sched_switch/id"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(id)); got != strconv.FormatUint(uint64(f.ID), 10) {
		t.Errorf("ID = %d, tracefs id file says %s", f.ID, got)
	}
	if f.Fields[0].Name != "prev_comm" || f.Fields[0].CType != "char[16]" {
		t.Errorf("first sched_switch field = %+v, want prev_comm char[16]", f.Fields[0])
	}
}

func TestTracepointFormatMissing(t *testing.T) {
	testutils.RequireRoot(t)
	_, err := TracepointFormat("nosuchcategory", "nosuchevent")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a not-exist error", err)
	}
}
