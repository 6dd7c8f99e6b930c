package output

import (
	"strings"
	"testing"
	"time"
)

func TestTSeries(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	tests := []struct {
		name       string
		m          *Map
		text, json string
	}{
		{
			name: "scalar, points out of order, repeated values",
			m: &Map{Name: "@a", Kind: TSeries, Interval: 100e6, Intervals: 4, Entries: []Entry{{Series: []Point{
				{11, Uint(7)}, {10, Uint(3)}, {12, Uint(5)}, {13, Uint(7)}}}}},
			text: `@a:
             3                                                   7
hh:mm:ss.ms  |___________________________________________________|
00:00:01.000 *                                                   | 3
00:00:01.100 |                                                   * 7
00:00:01.200 |                         *                         | 5
00:00:01.300 |                                                   * 7
             v___________________________________________________v
             3                                                   7

`,
			json: `{"type": "tseries", "data": {"@a": [{"interval_start":"1970-01-01 00:00:01.000000000","value":3},{"interval_start":"1970-01-01 00:00:01.100000000","value":7},{"interval_start":"1970-01-01 00:00:01.200000000","value":5},{"interval_start":"1970-01-01 00:00:01.300000000","value":7}]}}
`,
		},
		{
			// old's last interval is before the map's window, which
			// ends at new's latest: it starts at its first value in the
			// window, and its missing intervals print as '-'. new spans
			// zero, marked with '.'.
			name: "keys, gaps, negative values",
			m: &Map{Name: "@b", Kind: TSeries, Interval: 1e9, Intervals: 5, Entries: []Entry{
				{Key: []Value{Str("old")}, Series: []Point{{3, Int(-2)}, {5, Int(4)}, {0, Int(0)}}},
				{Key: []Value{Str("new")}, Series: []Point{{7, Int(1)}, {8, Int(-3)}}}}},
			text: `@b[old]:
         3                                                   5
hh:mm:ss |___________________________________________________|
00:00:05 |                         *                         | 4
00:00:06 |                                                   | -
00:00:07 |                                                   | -
00:00:08 |                                                   | -
         v___________________________________________________v
         3                                                   5

@b[new]:
         -3                                                  1
hh:mm:ss |___________________________________________________|
00:00:07 |                                      .            * 1
00:00:08 *                                      .            | -3
         v___________________________________________________v
         -3                                                  1

`,
			json: `{"type": "tseries", "data": {"@b": {"old": [{"interval_start":"1970-01-01 00:00:05.000000000","value":4}], "new": [{"interval_start":"1970-01-01 00:00:07.000000000","value":1},{"interval_start":"1970-01-01 00:00:08.000000000","value":-3}]}}}
`,
		},
		{
			// zero() leaves every slot at epoch 0: the window wraps
			// below 0 and holds nothing.
			name: "zeroed",
			m:    &Map{Name: "@z", Kind: TSeries, Interval: 10, Intervals: 3, Entries: []Entry{{Series: []Point{{0, Int(0)}}}}},
			text: "@z:\n<no data>\n\n",
			json: `{"type": "tseries", "data": {"@z": []}}` + "\n",
		},
		{
			// One interval has no distance to the next: its time
			// prints to the nanosecond.
			name: "one interval, tuple key",
			m: &Map{Name: "@one", Kind: TSeries, Interval: 1000, Intervals: 3, Entries: []Entry{
				{Key: []Value{Int(1), Str("x")}, Series: []Point{{5000, Uint(9)}}}}},
			text: `@one[1, x]:
                   8                                                  10
hh:mm:ss.ns        |___________________________________________________|
00:00:00.005000000 |                         *                         | 9
                   v___________________________________________________v
                   8                                                  10

`,
			json: `{"type": "tseries", "data": {"@one": {"1,x": [{"interval_start":"1970-01-01 00:00:00.005000000","value":9}]}}}
`,
		},
		{
			name: "empty",
			m:    &Map{Name: "@e", Kind: TSeries, Interval: 10, Intervals: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MapText(tt.m, 0, 0); got != tt.text {
				t.Errorf("text:\n%s\nwant:\n%s", got, tt.text)
			}
			if got := MapJSON(tt.m, 0, 0); got != tt.json {
				t.Errorf("json:\n%s\nwant:\n%s", got, tt.json)
			}
		})
	}
}

// TestTSeriesMicroseconds checks the unit of intervals under a
// millisecond, whose name is two bytes wide in the header.
func TestTSeriesMicroseconds(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	m := &Map{Name: "@u", Kind: TSeries, Interval: 5000, Intervals: 2, Entries: []Entry{{Series: []Point{
		{1, Int(2)}, {2, Int(2)}}}}}
	want := `@u:
                1                                                   3
hh:mm:ss.μs    |___________________________________________________|
00:00:00.000005 |                         *                         | 2
00:00:00.000010 |                         *                         | 2
                v___________________________________________________v
                1                                                   3

`
	if got := MapText(m, 0, 0); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}

// TestTSeriesFarBelowZero draws a value far below zero beside a small
// positive one: the zero mark stays inside the chart.
func TestTSeriesFarBelowZero(t *testing.T) {
	m := &Map{Name: "@f", Kind: TSeries, Interval: 1e9, Intervals: 2, Entries: []Entry{{Series: []Point{
		{1, Int(-4e18)}, {2, Int(1)}}}}}
	text := MapText(m, 0, 0)
	if !strings.Contains(text, "-4000000000000000000") || !strings.Contains(text, "* 1\n") {
		t.Errorf("text:\n%s", text)
	}
}
