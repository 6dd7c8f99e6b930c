package diag_test

import (
	"bytes"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestRenderSyntaxErrors checks whole diagnostics of programs given with
// -e against what bpftrace 0.17 prints for them (its file name for -e is
// "stdin"). Comments mark where gtrace follows bpftrace v0.26 instead.
func TestRenderSyntaxErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"BEGIN { x = ; }", `stdin:1:11-12: ERROR: syntax error, unexpected =, expecting }
BEGIN { x = ; }
          ~
`},
		{"BEGIN { $x = ; }", `stdin:1:14-15: ERROR: syntax error, unexpected ;
BEGIN { $x = ; }
             ~
`},
		// An empty span at the end of the file underlines nothing.
		{"BEGIN { @x = 1 ", `stdin:1:16-16: ERROR: syntax error, unexpected end of file, expecting }
BEGIN { @x = 1 
               
`},
		// Tabs print as four spaces, in the line and in the underline.
		{"\tBEGIN {\t @x = 1 \tx }", `stdin:1:19-20: ERROR: syntax error, unexpected identifier, expecting }
    BEGIN {     @x = 1     x }
                           ~
`},
		{`BEGIN { printf("hi" 1); }`, `stdin:1:21-22: ERROR: syntax error, unexpected integer, expecting ) or ","
BEGIN { printf("hi" 1); }
                    ~
`},
		{"BEGIN { @x[1 = 2; }", `stdin:1:14-15: ERROR: syntax error, unexpected =, expecting ] or ","
BEGIN { @x[1 = 2; }
             ~
`},
		{"BEGIN { $x = 1 ? 2 ; }", `stdin:1:20-21: ERROR: syntax error, unexpected ;, expecting :
BEGIN { $x = 1 ? 2 ; }
                   ~
`},
		{"kprobe:f / pid { }", `stdin:1:16-17: ERROR: syntax error, unexpected {, expecting end predicate
kprobe:f / pid { }
               ~
`},
		{"BEGIN @x = 1; }", `stdin:1:7-9: ERROR: syntax error, unexpected map, expecting {
BEGIN @x = 1; }
      ~~
`},
		{"BEGIN { @a = (1 }", `stdin:1:17-18: ERROR: syntax error, unexpected }, expecting ) or ","
BEGIN { @a = (1 }
                ~
`},
		{"BEGIN { ; }", `stdin:1:9-10: ERROR: syntax error, unexpected ;, expecting }
BEGIN { ; }
        ~
`},
		{"BEGIN { @a = 1 @b = 2 }", `stdin:1:16-18: ERROR: syntax error, unexpected map, expecting }
BEGIN { @a = 1 @b = 2 }
               ~~
`},
		{"BEGIN { exit( }", `stdin:1:15-16: ERROR: syntax error, unexpected }
BEGIN { exit( }
              ~
`},
		// The lexer's error, then the parser's at the next token.
		{"BEGIN { @ = 1 ` 2; }", "stdin:1:15-16: ERROR: invalid character '`'\n" +
			"BEGIN { @ = 1 ` 2; }\n" +
			"              ~\n" +
			"stdin:1:17-18: ERROR: syntax error, unexpected integer, expecting }\n" +
			"BEGIN { @ = 1 ` 2; }\n" +
			"                ~\n"},
		{"BEGIN { @x = 1 } /* unterminated", `stdin:1:18-33: ERROR: end of file during comment
BEGIN { @x = 1 } /* unterminated
                 ~~~~~~~~~~~~~~~
`},
		{`BEGIN { @x = "abc }`, `stdin:1:14-20: ERROR: unterminated string
BEGIN { @x = "abc }
             ~~~~~~
stdin:1:20-20: ERROR: syntax error, unexpected end of file, expecting }
BEGIN { @x = "abc }
                   
`},
		// bpftrace 0.17 underlines from the start of the call, 1:9-19;
		// gtrace, like v0.26, points at the escape itself.
		{`BEGIN { printf("\q"); }`, `stdin:1:17-19: ERROR: invalid escape character '\q'
BEGIN { printf("\q"); }
                ~~
`},
		// A span over several lines: bpftrace 0.17 prints only
		// "stdin:1-2: ERROR: ..."; v0.26 adds the lines, as gtrace does.
		// The message is v0.26's.
		{"BEGIN { }\nstruct S {\n int a; };", `stdin:2-3: ERROR: C definitions must appear before probes
struct S {
 int a; };
`},
		// Message and span as in bpftrace v0.26; 0.17 said "stoull".
		{"BEGIN { @ = 99999999999999999999; }", `stdin:1:13-33: ERROR: overflow error, maximum value is 18446744073709551615: 99999999999999999999
BEGIN { @ = 99999999999999999999; }
            ~~~~~~~~~~~~~~~~~~~~
`},
	}
	for _, tt := range tests {
		f := token.NewFile("stdin", []byte(tt.src))
		_, errs := parser.ParseFile(f)
		var b bytes.Buffer
		diag.Render(&b, f, errs)
		if got := b.String(); got != tt.want {
			t.Errorf("%q:\n got:\n%s\n want:\n%s", tt.src, got, tt.want)
		}
	}
}
