package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseKubectlArgs(t *testing.T) {
	tests := []struct {
		args []string
		want kubectlOptions // only the fields checked below
		err  string
	}{
		{args: []string{"--all-nodes", "-e", "BEGIN {}"}, want: kubectlOptions{allNodes: true, program: "BEGIN {}"}},
		{args: []string{"-a", "-e", "BEGIN {}", "--per-node", "--deadline", "30s", "x", "y"},
			want: kubectlOptions{allNodes: true, perNode: true, program: "BEGIN {}", deadline: 30 * time.Second, args: []string{"x", "y"}}},
		{args: []string{"node/worker-1", "-e", "BEGIN {}"}, want: kubectlOptions{target: "node/worker-1", program: "BEGIN {}"}},
		{args: []string{"-e", "BEGIN {}", "pod/web", "--container", "app"}, want: kubectlOptions{target: "pod/web", container: "app", program: "BEGIN {}"}},
		{args: []string{"-l", "zone=a", "-e", "BEGIN {}"}, want: kubectlOptions{selector: "zone=a", program: "BEGIN {}"}},
		{args: []string{"-e", "BEGIN {}"}, err: "no target"},
		{args: []string{"--all-nodes", "node/a", "-e", "BEGIN {}"}, err: "give one target"},
		{args: []string{"--all-nodes"}, err: "no program"},
		{args: []string{"--all-nodes", "-e", "BEGIN {}", "--container", "app"}, err: "--container names a container of pod/NAME"},
		{args: []string{"--all-nodes", "-e", "BEGIN {}", "--deadline", "-1s"}, err: "--deadline must not be negative"},
		{args: []string{"--all-nodes", "-e", "BEGIN {}", "--parallel", "0"}, err: "--parallel must be at least 1"},
		{args: []string{"--all-nodes", "-e", "BEGIN {}", "--bogus"}, err: "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseKubectlArgs(tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.target != tt.want.target || o.selector != tt.want.selector || o.allNodes != tt.want.allNodes ||
				o.perNode != tt.want.perNode || o.program != tt.want.program || o.deadline != tt.want.deadline ||
				o.container != tt.want.container || strings.Join(o.args, " ") != strings.Join(tt.want.args, " ") {
				t.Errorf("got %+v, want %+v", *o, tt.want)
			}
			if o.namespace != "gtrace" || o.parallel != 100 {
				t.Errorf("defaults: namespace %q, parallel %d", o.namespace, o.parallel)
			}
		})
	}
}
