// Package tools holds gtrace's tools: bpftrace scripts embedded in the
// binary, run by name as `gtrace tools NAME` or through a link named
// after the tool.
//
// A tool is one script, tools/GROUP/NAME.bt. Its first comment says what
// it is:
//
//	/*
//	 * NAME - one line that says what it shows.
//	 *
//	 * Paragraphs that say how, and what it leaves out.
//	 *
//	 * EXAMPLES:
//	 *     NAME -D 1 5      # what this command line shows
//	 */
//
// Its options are the script's own getopt() calls, with their
// descriptions; BCC's short flags map onto them through one table,
// Flags, and the positional INTERVAL and COUNT onto the options
// interval and count. So a tool runs the same copied out of the binary:
// `gtrace NAME.bt -- --disks --interval=1`.
package tools
