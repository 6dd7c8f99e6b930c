package bench

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Command is a tracer given as a command template: its words, in which
// {} stands for the path of the script to run. Without {}, the path comes
// last. The command must exec the tracer itself, not a wrapper such as
// sudo, for its BPF programs are found among the process's own files.
type Command struct {
	Name string
	Argv []string
}

// ParseCommand reads a tracer as NAME=COMMAND, such as
// "bpftrace=/usr/bin/bpftrace -q {}", or as a bare program name or path,
// which it runs on the script and names after.
func ParseCommand(s string) (Command, error) {
	name, cmd, named := strings.Cut(s, "=")
	if !named {
		cmd, name = s, filepath.Base(strings.Fields(s + " x")[0])
	}
	c := Command{Name: name, Argv: strings.Fields(cmd)}
	if c.Name == "" || len(c.Argv) == 0 {
		return Command{}, fmt.Errorf("tracer %q: want NAME=COMMAND or a program", s)
	}
	if c.Name == FloorName {
		return Command{}, fmt.Errorf("tracer %q: %s names the hand-written programs the bench always runs", s, FloorName)
	}
	path, err := exec.LookPath(c.Argv[0])
	if err != nil {
		return Command{}, fmt.Errorf("tracer %s: %w", c.Name, err)
	}
	c.Argv[0] = path
	if !slices.Contains(c.Argv, "{}") {
		c.Argv = append(c.Argv, "{}")
	}
	return c, nil
}

// args returns the command's arguments after the program, for script.
func (c Command) args(script string) []string {
	var args []string
	for _, a := range c.Argv[1:] {
		args = append(args, strings.ReplaceAll(a, "{}", script))
	}
	return args
}

func (c Command) tracer() Tracer { return Tracer{Name: c.Name, Path: c.Argv[0]} }
