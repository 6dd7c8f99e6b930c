package probe

import (
	"reflect"
	"testing"
)

// parseCase is an attach point and the one probe it parses to, or the
// error it gives.
type parseCase struct {
	text string
	want Probe
	err  string
}

// checkParse parses each case's text; check, when set, looks further at
// a probe that parsed as wanted.
func checkParse(t *testing.T, cases []parseCase, check func(t *testing.T, p Probe)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("Parse(%q) error %v, want %q", tt.text, err, tt.err)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			}
			if check != nil {
				check(t, got[0])
			}
		})
	}
}
