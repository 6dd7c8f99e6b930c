package parser

import (
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"gtrace/lang/token"
)

func TestStress(t *testing.T) {
	if os.Getenv("STRESS") == "" {
		t.Skip()
	}
	frags := []string{"BEGIN", "{", "}", "(", ")", "[", "]", ",", ";", ":", ".", "->", "?", "=", "+=", "/", "*", "-", "++", "!", "&",
		"@x", "$y", "$1", "1", "\"s\"", "if", "else", "while", "for", "unroll", "let", "sizeof", "offsetof", "struct", "S", "config", "#include <x>\n",
		" ", "\n", "uint8", "pid", "f", "kprobe:a", "break", "return", "true", "/*", "*/", "//", "\\", "`", "$", "0x", "1e5"}
	r := rand.New(rand.NewSource(1))
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		n := r.Intn(30)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(frags[r.Intn(len(frags))])
		}
		src := b.String()
		done := make(chan bool)
		go func() {
			ParseFile(token.NewFile("x", []byte(src)))
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("hang on %q", src)
		}
	}
}
