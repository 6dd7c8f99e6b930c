// Package scanner turns bpftrace source text into tokens.
//
// The scanner has two modes. Inside a probe body, or in a predicate, it
// reads ordinary tokens: identifiers, keywords, numbers, strings, $vars,
// @maps and operators. Where a probe may start (at the top level, after a
// closing brace or a comma that follows an attach point) it reads an
// attach point as one PROBE token, since attach points contain ':', '/',
// '*' and other characters that are operators elsewhere. At the same
// places, a '#' line is one CPREPROC token.
//
// The scanner keeps no buffers of its own, so a copy of a Scanner value is
// a save point that the parser can return to.
package scanner
