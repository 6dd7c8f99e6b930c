package kernel

import "strings"

// Match reports whether s matches pattern, where '*' matches any run of
// characters, including ':'. This is the only wildcard bpftrace v0.26
// supports in attach points and listings; every other character is literal.
func Match(pattern, s string) bool {
	// Iterative matching with backtracking to the most recent '*' keeps this
	// linear in practice, unlike recursion.
	p, i := 0, 0
	star, next := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, next = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			next++
			p, i = star+1, next
		default:
			return false
		}
	}
	return strings.Trim(pattern[p:], "*") == ""
}

// HasWildcard reports whether pattern needs expanding with Match.
func HasWildcard(pattern string) bool {
	return strings.Contains(pattern, "*")
}
