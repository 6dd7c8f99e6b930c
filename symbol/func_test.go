package symbol

import (
	"os"
	"slices"
	"testing"
)

// TestLookupFunc finds a function of a C program by name and by an
// address inside it, and its place in the file.
func TestLookupFunc(t *testing.T) {
	self := buildDwarf(t, t.TempDir(), "funcs")
	const name = "count"
	fn, ok, err := LookupFunc(self, name)
	if err != nil || !ok || fn.Size == 0 || fn.FileOffset == 0 {
		t.Fatalf("LookupFunc(%s) = %+v, %v, %v", name, fn, ok, err)
	}
	if off, err := FileOffset(self, fn.Value); err != nil || off != fn.FileOffset {
		t.Errorf("FileOffset(%#x) = %#x, %v; want %#x", fn.Value, off, err, fn.FileOffset)
	}
	at, ok, err := FuncAt(self, fn.Value+fn.Size-1)
	if err != nil || !ok || at.Name != name {
		t.Errorf("FuncAt(end of %s) = %+v, %v, %v", name, at, ok, err)
	}
	if _, ok, err := LookupFunc(self, "gtrace_no_such_function"); ok || err != nil {
		t.Errorf("LookupFunc(gtrace_no_such_function) = %v, %v; want not found", ok, err)
	}
	if _, ok, _ := FuncAt(self, 10); ok {
		t.Errorf("FuncAt(10) found a function")
	}
}

// TestMappedFiles finds the test binary among the files it maps.
func TestMappedFiles(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files, err := MappedFiles(os.Getpid())
	if err != nil || !slices.Contains(files, self) {
		t.Errorf("MappedFiles(self) = %q, %v; want %s among them", files, err, self)
	}
	if root := ProcessRoot(os.Getpid()); root != "" {
		t.Errorf("ProcessRoot(self) = %q, want \"\"", root)
	}
}
