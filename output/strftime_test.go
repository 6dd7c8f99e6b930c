package output

import (
	"strings"
	"testing"
	"time"
)

// Expected strings come from GNU date (glibc's strftime conventions) for
// the same instants.
func TestCStrftime(t *testing.T) {
	const all = "%a|%A|%b|%B|%c|%C|%d|%D|%e|%F|%g|%G|%h|%H|%I|%j|%k|%l|%m|%M|%p|%P|%r|%R|%s|%S|%T|%u|%U|%V|%w|%W|%x|%X|%y|%Y|%z|%Z|%%"
	const flags = "%-d|%_m|%05Y|%^a|%#Z|%#p|%Ey|%Od|%10A|%-10A|%010d|%^B|%#b|%3d"
	est := time.FixedZone("EST", -5*3600)
	tests := []struct {
		format string
		t      time.Time
		want   string
	}{
		{all, time.Unix(1700000000, 0).UTC(),
			"Tue|Tuesday|Nov|November|Tue Nov 14 22:13:20 2023|20|14|11/14/23|14|2023-11-14|23|2023|Nov|22|10|318|22|10|11|13|PM|pm|10:13:20 PM|22:13|1700000000|20|22:13:20|2|46|46|2|46|11/14/23|22:13:20|23|2023|+0000|UTC|%"},
		{all, time.Unix(1700000000, 0).In(est),
			"Tue|Tuesday|Nov|November|Tue Nov 14 17:13:20 2023|20|14|11/14/23|14|2023-11-14|23|2023|Nov|17|05|318|17| 5|11|13|PM|pm|05:13:20 PM|17:13|1700000000|20|17:13:20|2|46|46|2|46|11/14/23|17:13:20|23|2023|-0500|EST|%"},
		{all, time.Unix(1704067200, 0).UTC(),
			"Mon|Monday|Jan|January|Mon Jan  1 00:00:00 2024|20|01|01/01/24| 1|2024-01-01|24|2024|Jan|00|12|001| 0|12|01|00|AM|am|12:00:00 AM|00:00|1704067200|00|00:00:00|1|00|01|1|01|01/01/24|00:00:00|24|2024|+0000|UTC|%"},
		{flags, time.Unix(1700000000, 0).UTC(), "14|11|02023|TUE|utc|pm|23|14|   Tuesday|Tuesday|0000000014|NOVEMBER|NOV|014"},
		{flags, time.Unix(1704067200, 0).UTC(), "1| 1|02024|MON|utc|am|24|01|    Monday|Monday|0000000001|JANUARY|JAN|001"},
		{"%G %V %g %U %W %j %u %w %a", time.Unix(1735603200, 0).UTC(), "2025 01 25 52 53 366 2 2 Tue"},
		{"%q %5Q|%", time.Unix(0, 0).UTC(), "%q %5Q|%"},
	}
	for _, tt := range tests {
		if got := cStrftime(tt.format, tt.t); got != tt.want {
			t.Errorf("cStrftime(%q, %v)\n got %q\nwant %q", tt.format, tt.t, got, tt.want)
		}
	}
}

func TestStrftime(t *testing.T) {
	ts := time.Unix(1700000000, 123456789).UTC()
	tests := []struct {
		format string
		t      time.Time
		want   string
	}{
		{"%H:%M:%S.%f", ts, "22:13:20.123456"},
		{"%s.%k %l", ts, "1700000000.123456789 123"},
		{"%%f", ts, "%123456"}, // bpftrace replaces %f before strftime sees %%
		{"%H", time.Unix(0, 5000).UTC(), "(?)"},
		{"", ts, "(?)"},
		{strings.Repeat("x", 1024), ts, "(?)"},
		{strings.Repeat("x", 1023), ts, strings.Repeat("x", 1023)},
	}
	for _, tt := range tests {
		if got := Strftime(tt.format, tt.t, 1024); got != tt.want {
			t.Errorf("Strftime(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestTimeString(t *testing.T) {
	ts := time.Unix(1700000000, 0).UTC()
	if got, err := TimeString(DefaultTimeFormat, ts); err != nil || got != "22:13:20\n" {
		t.Errorf("TimeString = %q, %v", got, err)
	}
	if _, err := TimeString(strings.Repeat("x", 64), ts); err == nil {
		t.Error("TimeString accepted a result longer than 63 bytes")
	}
}
