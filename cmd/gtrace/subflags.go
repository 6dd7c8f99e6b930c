package main

import "flag"

// parseMixed parses a subcommand's arguments with fs, flags before or
// after its operands, as getopt does, and returns the operands.
func parseMixed(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
