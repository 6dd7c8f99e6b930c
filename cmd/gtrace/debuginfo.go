package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// debugDirs adds the directories of --debuginfo DIR[:DIR] or
// --debuginfo=DIR[:DIR] to dirs.
func debugDirs(dirs []string, arg string, value func() (string, error)) ([]string, error) {
	list, ok := strings.CutPrefix(arg, "--debuginfo=")
	if !ok {
		var err error
		if list, err = value(); err != nil {
			return dirs, err
		}
	}
	for _, d := range filepath.SplitList(list) {
		if d == "" {
			return dirs, fmt.Errorf("--debuginfo: an empty directory in %q", list)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}
