package runtime

import (
	"io"
	"os"
)

// readCat reads what cat() prints of a file: at most limit bytes
// (max_cat_bytes), so that a device or a huge file ends it.
func readCat(name string, limit int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)))
}
