package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// defaultTimeout is the TIMEOUT of a case that gives none, in seconds.
const defaultTimeout = 5

// expectMode is how one expectation is checked against the output.
type expectMode int

const (
	expectText      expectMode = iota // EXPECT: a whole line, spaces trimmed
	expectTextNone                    // EXPECT_NONE: no such line
	expectRegex                       // EXPECT_REGEX: the regex matches
	expectRegexNone                   // EXPECT_REGEX_NONE: it does not
	expectFile                        // EXPECT_FILE: the output is the file
	expectJSON                        // EXPECT_JSON: the output is the JSON
)

// expect is one EXPECT* directive.
type expect struct {
	mode expectMode
	text string
}

// testCase is one runtime test case, as bpftrace's test engine reads it.
type testCase struct {
	file, name    string
	line          int // of the NAME directive
	run, prog     string
	expects       []expect
	exact         bool // EXPECT_FILE or EXPECT_JSON: output before attach is dropped
	timeout       int  // seconds
	befores       []string
	after         string
	setup         string
	cleanup       string
	minKernel     string
	maxKernel     string
	requires      []string
	env           map[string]string
	arch          []string
	features      []string
	notFeatures   []string
	willFail      bool
	newPidNS      bool
	skipIfEnv     []string // name and value
	returnCode    int
	localizeTS    int64 // LOCALIZE_TIMESTAMPS, or -1
	hasReturnCode bool
}

// parseCases reads the cases of one test file. Cases are separated by
// empty lines, lines starting with '#' are comments, and an indented line
// continues the PROG, EXPECT or EXPECT_REGEX before it.
func parseCases(file string, r io.Reader) ([]testCase, error) {
	var (
		cases []testCase
		block []string
		start int
	)
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if l != "\n" {
			if len(block) == 0 {
				start = i + 1
			}
			block = append(block, l)
		}
		if (l == "\n" || i == len(lines)-1) && len(block) > 0 {
			c, err := parseCase(file, start, block)
			if err != nil {
				return nil, err
			}
			cases = append(cases, c)
			block = nil
		}
	}
	return cases, nil
}

// readLines splits r into lines that keep their "\n".
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if l != "" {
			lines = append(lines, l)
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseCase reads the directives of one case; start is its first line.
func parseCase(file string, start int, block []string) (testCase, error) {
	c := testCase{file: file, line: start, timeout: defaultTimeout, localizeTS: -1, env: map[string]string{}}
	prev := ""
	for _, item := range block {
		if continues(item, prev) {
			// The engine drops the directive's width plus one and the
			// last character.
			line := ""
			if len(item) > len(prev)+1 {
				line = item[len(prev)+1 : len(item)-1]
			}
			switch prev {
			case "PROG":
				c.prog += "\n" + line
				continue
			case "EXPECT", "EXPECT_REGEX":
				c.expects[len(c.expects)-1].text += "\n" + line
				continue
			}
		}
		fields := strings.Fields(item)
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		arg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(item), name))
		prev = name
		if err := c.directive(name, arg); err != nil {
			return c, fmt.Errorf("%s:%d: %w", file, start, err)
		}
	}
	return c, c.validate()
}

// continues tells whether item is an indented continuation of the
// directive prev: its first len(prev)+1 characters are all white space.
func continues(item, prev string) bool {
	n := len(prev) + 1
	if len(item) < n {
		n = len(item)
	}
	return n > 0 && strings.TrimSpace(item[:n]) == ""
}

// directive applies one directive and its argument.
func (c *testCase) directive(name, arg string) error {
	var err error
	switch name {
	case "NAME":
		c.name = arg
	case "RUN":
		c.run = arg
	case "PROG":
		c.prog = arg
	case "EXPECT":
		c.expects = append(c.expects, expect{expectText, arg})
	case "EXPECT_NONE":
		c.expects = append(c.expects, expect{expectTextNone, arg})
	case "EXPECT_REGEX":
		c.expects = append(c.expects, expect{expectRegex, arg})
	case "EXPECT_REGEX_NONE":
		c.expects = append(c.expects, expect{expectRegexNone, arg})
	case "EXPECT_FILE":
		c.exact = true
		c.expects = append(c.expects, expect{expectFile, arg})
	case "EXPECT_JSON":
		c.exact = true
		c.expects = append(c.expects, expect{expectJSON, arg})
	case "TIMEOUT":
		c.timeout, err = strconv.Atoi(arg)
	case "BEFORE":
		c.befores = append(c.befores, arg)
	case "AFTER":
		c.after = arg
	case "SETUP":
		c.setup = arg
	case "CLEANUP":
		c.cleanup = arg
	case "MIN_KERNEL":
		c.minKernel = arg
	case "MAX_KERNEL":
		c.maxKernel = arg
	case "REQUIRES":
		c.requires = append(c.requires, arg)
	case "ENV":
		err = c.addEnv(arg)
	case "ARCH":
		c.arch = nil
		for _, a := range strings.Split(arg, "|") {
			c.arch = append(c.arch, strings.TrimSpace(a))
		}
	case "REQUIRES_FEATURE":
		err = c.addFeatures(arg)
	case "WILL_FAIL":
		c.willFail = true
	case "NEW_PIDNS":
		c.newPidNS = true
	case "SKIP_IF_ENV_HAS":
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("SKIP_IF_ENV_HAS %q: want NAME=VALUE", arg)
		}
		c.skipIfEnv = []string{k, v}
	case "RETURN_CODE":
		c.returnCode, err = strconv.Atoi(arg)
		c.hasReturnCode = true
	case "LOCALIZE_TIMESTAMPS":
		c.localizeTS, err = strconv.ParseInt(arg, 10, 64)
	default:
		return fmt.Errorf("%s is not a runtime test directive", name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (c *testCase) addEnv(arg string) error {
	for _, kv := range strings.Fields(arg) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.Contains(v, "=") {
			return fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		c.env[k] = v
	}
	return nil
}

func (c *testCase) addFeatures(arg string) error {
	for _, f := range strings.Split(arg, " ") {
		f = strings.TrimSpace(f)
		neg := strings.HasPrefix(f, "!")
		f = strings.TrimPrefix(f, "!")
		if _, ok := featureChecks[f]; !ok {
			return fmt.Errorf("unknown feature %q", f)
		}
		if neg {
			c.notFeatures = append(c.notFeatures, f)
		} else {
			c.features = append(c.features, f)
		}
	}
	return nil
}

// validate applies the engine's rules for a complete case.
func (c *testCase) validate() error {
	where := fmt.Sprintf("%s:%d", c.file, c.line)
	switch {
	case c.name == "":
		return fmt.Errorf("%s: NAME is required", where)
	case c.run == "" && c.prog == "":
		return fmt.Errorf("%s: %s: RUN or PROG is required", where, c.name)
	case c.run != "" && c.prog != "":
		return fmt.Errorf("%s: %s: both RUN and PROG", where, c.name)
	case len(c.expects) == 0 && !c.hasReturnCode:
		return fmt.Errorf("%s: %s: an EXPECT is required", where, c.name)
	case len(c.expects) > 1 && c.exact:
		return fmt.Errorf("%s: %s: EXPECT_FILE or EXPECT_JSON with other EXPECTs", where, c.name)
	case c.returnCode != 0 && c.willFail:
		return fmt.Errorf("%s: %s: WILL_FAIL with RETURN_CODE", where, c.name)
	}
	return nil
}

// archMatches applies ARCH: any listed identifier of the host selects
// the case, any "!"-prefixed one excludes it.
func archMatches(arch, host []string) bool {
	var pos, neg []string
	for _, a := range arch {
		if n, ok := strings.CutPrefix(a, "!"); ok {
			neg = append(neg, n)
		} else {
			pos = append(pos, a)
		}
	}
	hasAny := func(list []string) bool {
		for _, a := range list {
			for _, h := range host {
				if a == h {
					return true
				}
			}
		}
		return false
	}
	if len(pos) > 0 && !hasAny(pos) {
		return false
	}
	return !hasAny(neg)
}
