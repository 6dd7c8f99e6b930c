// Package metrics exposes a running script's maps to Prometheus, for
// `gtrace serve --metrics ADDR`: it works out from the compiled script
// how each map becomes a metric family (count() a counter, sum() a
// counter or a gauge, min, max and avg gauges, hist and lhist histograms,
// stats a summary; key parts become labels), writes snapshots of the
// maps in the OpenMetrics or the classic Prometheus text format, with
// gtrace's own costs, and answers scrapes over HTTP. Only the serve
// subcommand uses it; docs/design.md ("serve and /metrics") has the
// rules.
package metrics
