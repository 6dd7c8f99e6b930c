package runtime

import (
	"encoding/binary"

	"gtrace/codegen"
	"gtrace/output"
)

// helperError decodes an EvHelperError record: the helper's error code,
// with where the compiler placed it.
func helperError(ev *codegen.Event, rec []byte) *output.HelperError {
	return &output.HelperError{Helper: ev.Format,
		Retcode: int64(binary.LittleEndian.Uint64(rec[ev.Offsets[0]:])),
		Located: ev.Located, Loc: ev.Loc}
}
